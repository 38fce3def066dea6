"""One daemon per home: a second `serve` / `daemon start` exits 2 naming the first, which keeps
its pidfile and can still be stopped by `kenning daemon stop`."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx

from bench.harnesses.daemon import free_port, start_daemon


def run(home, *args, port):
    env = {**os.environ, "KENNING_HOME": str(home), "KENNING_PORT": str(port)}
    return subprocess.run([sys.executable, "-m", "kenning", *args], env=env, capture_output=True,
                          text=True, timeout=180)


def test_second_daemon_on_the_same_home_exits_2_naming_the_first(tmp_path):
    home = tmp_path / "home"
    first = start_daemon(home)
    try:
        pid_before = (home / "daemon.pid").read_text().strip()
        assert pid_before == str(first.proc.pid)
        other_port = free_port()
        for command in (["serve"], ["daemon", "start"]):
            second = run(home, *command, port=other_port)
            assert second.returncode == 2, (command, second.stdout, second.stderr)
            assert f"pid {first.proc.pid}" in second.stderr and f"port {first.port}" in second.stderr
            assert len(second.stderr.strip().splitlines()) == 1
            assert (home / "daemon.pid").read_text().strip() == pid_before
            try:
                httpx.get(f"http://127.0.0.1:{other_port}/api/health", timeout=1)
                raise AssertionError("the second daemon answers")
            except httpx.TransportError:
                pass
        same = run(home, "daemon", "start", port=first.port)
        assert same.returncode == 0 and f"already running (pid {first.proc.pid})" in same.stdout
        stopped = run(home, "daemon", "stop", port=first.port)
        assert stopped.returncode == 0 and f"stopped (pid {first.proc.pid})" in stopped.stdout
        first.proc.wait(timeout=30)
        assert not (home / "daemon.pid").exists()
    finally:
        first.stop()


def test_lock_is_released_when_the_daemon_dies(tmp_path):
    home = tmp_path / "home"
    first = start_daemon(home)
    first.proc.kill()
    first.proc.wait(timeout=30)
    second = start_daemon(home)  # the kernel dropped the flock with the process
    try:
        assert (home / "daemon.pid").read_text().strip() == str(second.proc.pid)
        assert (home / "daemon.lock").read_text().split() == [str(second.proc.pid), str(second.port)]
    finally:
        second.stop()
