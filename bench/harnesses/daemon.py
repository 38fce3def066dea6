"""A real kenning daemon (`python -m kenning serve`) on a temporary home and a free port: the one starter the
benches (bench/hook_stdout.py, bench/background_load.py) and the tests' `daemon` fixtures (tests/conftest.py)
share, so each waits for it, names its log and stops it the same way.

The code it runs is the `kenning` this interpreter imports, or another tree's: `src` (an older tree's src/) goes on
the daemon's PYTHONPATH, which wins over the venv's editable install. The benches that start daemons
(bench/daemon_rss.py, bench/durability.py, bench/hooks.py, bench/observer.py, bench/scale_pg.py) use it too: a
fixed `port` for a daemon that is killed and restarted where its hooks find it (`kill`, `restart`), extra
environment (a user's HOME, a hook timeout), the log's name in the home.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

START_TIMEOUT_S = 120.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class DaemonProcess:
    home: Path
    port: int
    proc: subprocess.Popen[bytes]
    env: dict[str, str] = field(default_factory=dict)  # the daemon's whole environment (hooks may share it)
    log_path: Path | None = None  # where its stdout and stderr go (None: home/daemon-test.log)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str, **params: str | int | float | bool | None) -> httpx.Response:
        return httpx.get(f"{self.base_url}{path}", params=params, timeout=60)

    def client(self, timeout: float = 60.0) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, timeout=timeout)

    @property
    def log(self) -> Path:
        return self.log_path or self.home / "daemon-test.log"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill(self) -> None:
        """SIGKILL, no warning (a crash, a machine going down), and wait until it is gone."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def restart(self, timeout_s: float = START_TIMEOUT_S) -> float:
        """Start it again once stopped or killed, on the same port, home, environment and log; the seconds
        until /api/health answered."""
        if self.proc.poll() is None:
            raise RuntimeError("the daemon is still running: stop or kill it first")
        started = time.monotonic()
        self.proc = _spawn(self.env, self.log)
        _wait_healthy(self, timeout_s, port_was_picked=False)
        return time.monotonic() - started


class PortTaken(RuntimeError):
    pass


def start_daemon(home: Path, config_yaml: str | None = None, extra_env: dict[str, str] | None = None, *,
                 log_name: str = "daemon-test.log", timeout_s: float = START_TIMEOUT_S, port: int | None = None,
                 src: Path | str | None = None) -> DaemonProcess:
    """Start `python -m kenning serve` with KENNING_HOME=`home` (its `config.yaml` written from `config_yaml`) on
    `port`, else a free port, and wait until /api/health answers; its output goes to `home/log_name`, `extra_env`
    is added to this process's environment and `src` (another tree's src/) is put on its PYTHONPATH. Parallel
    workers pick ports independently: a picked port taken between the pick and the bind is picked again."""
    for attempt in range(3):
        try:
            return _start_daemon(home, config_yaml, extra_env, log_name, timeout_s, port, src)
        except PortTaken:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _spawn(env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    with open(log_path, "ab") as log:
        return subprocess.Popen([sys.executable, "-m", "kenning", "serve"], env=env, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def _start_daemon(home: Path, config_yaml: str | None, extra_env: dict[str, str] | None, log_name: str,
                  timeout_s: float, port: int | None, src: Path | str | None) -> DaemonProcess:
    home.mkdir(parents=True, exist_ok=True)
    if config_yaml is not None:
        (home / "config.yaml").write_text(config_yaml)
    chosen = free_port() if port is None else port
    env = {**os.environ, "KENNING_HOME": str(home), "KENNING_PORT": str(chosen), **(extra_env or {})}
    if src is not None:
        env["PYTHONPATH"] = str(Path(src).resolve())
    log_path = home / log_name
    daemon = DaemonProcess(home, chosen, _spawn(env, log_path), env, log_path)
    _wait_healthy(daemon, timeout_s, port_was_picked=port is None and "KENNING_PORT" not in (extra_env or {}))
    return daemon


def _wait_healthy(daemon: DaemonProcess, timeout_s: float, *, port_was_picked: bool) -> None:
    """Until /api/health answers for this daemon's home; PortTaken when a port it was given by free_port() was
    taken by the time it bound, RuntimeError when it exits or does not answer within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if daemon.proc.poll() is not None:
            log_tail = daemon.log.read_text()[-3000:]
            if f"cannot listen on 127.0.0.1:{daemon.port}" in log_tail and port_was_picked:
                raise PortTaken(log_tail)
            raise RuntimeError(f"daemon exited early: {log_tail}")
        try:
            health = httpx.get(f"{daemon.base_url}/api/health", timeout=1)
            # another worker's daemon may hold the port for a moment: answers naming another home are not ours
            named = health.json().get("home") if health.status_code == 200 else ""
            if named is None or (named and Path(named).resolve() == daemon.home.resolve()):
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.2)
    daemon.stop()
    raise RuntimeError(f"daemon did not start: {daemon.log.read_text()[-3000:]}")
