"""A guard process that kills the predictor sidecar when the daemon dies, even a stopped sidecar.

The sidecar's own watchdog thread (sidecar._watch_parent) and its stdin EOF cannot run while
the sidecar is SIGSTOPped, so a `kill -9` of the daemon used to leave a stopped sidecar behind.
`start_guard()` forks a tiny process at sidecar start that is not stopped with it: every
`POLL_S` it reads the sidecar's parent pid from /proc and, once the daemon is gone (the sidecar
was re-parented), sends the sidecar SIGKILL — which ends a stopped process too. The guard
itself dies with the sidecar through PR_SET_PDEATHSIG (the sidecar's main thread forks it and
lives as long as the sidecar). Linux only; elsewhere the sidecar keeps its in-process watchdog.

(PR_SET_PDEATHSIG on the sidecar itself would tie it to the daemon *thread* that spawned it —
restarts come from short-lived timer threads — so the guard watches the process instead.)
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
POLL_S = 0.25
PARENT_ENV = "KENNING_SIDECAR_PARENT"  # the daemon's pid, set by SidecarClient when it spawns us


def expected_parent() -> int:
    """The daemon's pid as it was at spawn time (not getppid(): the daemon may already be gone)."""
    value = os.environ.get(PARENT_ENV, "")
    return int(value) if value.isdigit() else os.getppid()


def _parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2:].split()[1])  # fields after "(comm)": state, ppid


def die_with_parent() -> None:
    """Have the kernel SIGKILL this process when the thread that spawned it ends."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _guard(sidecar: int, daemon: int) -> None:
    die_with_parent()
    while True:
        parent = _parent_of(sidecar)
        if parent is None:
            return  # the sidecar is gone
        if parent != daemon:
            os.kill(sidecar, signal.SIGKILL)
            return
        time.sleep(POLL_S)


def start_guard(daemon: int) -> int | None:
    """Fork the guard (call first thing in the sidecar's main thread); returns its pid.

    Exits at once when `daemon` died while the sidecar was still starting."""
    if os.getppid() != daemon:
        os._exit(0)
    if not sys.platform.startswith("linux"):
        return None
    sidecar = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    try:
        os.closerange(0, 65536)  # hold none of the sidecar's pipes: the daemon must see its EOF
        _guard(sidecar, daemon)
    finally:
        os._exit(0)
