"""One daemon per home: an exclusive flock on `$KENNING_HOME/daemon.lock` held for its life.

The holder writes "pid port" into the file after locking, so a loser can name it. The kernel
drops the lock when the holder dies (even by kill -9), so a stale file never blocks a start.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

LOCK_NAME = "daemon.lock"


@dataclass(frozen=True)
class Holder:
    pid: int | None
    port: int | None

    def describe(self) -> str:
        return f"pid {self.pid if self.pid is not None else '?'}, port {self.port if self.port is not None else '?'}"


class HomeLock:
    def __init__(self, home: Path) -> None:
        self.path = home / LOCK_NAME
        self._fd: int | None = None

    def acquire(self, port: int) -> bool:
        """Take the lock and record this process; False (nothing written) when another holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {port}\n".encode())
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def holder(self) -> Holder | None:
        """Who holds the lock now, or None when nobody does (probes without keeping it)."""
        if not self.path.exists():
            return None
        fd = os.open(self.path, os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return _parse(self.path.read_text(encoding="utf-8", errors="replace"))
            return None
        finally:
            os.close(fd)


def _parse(text: str) -> Holder:
    parts = text.split()
    numbers = [int(p) if p.isdigit() else None for p in parts[:2]] + [None, None]
    return Holder(pid=numbers[0], port=numbers[1])
