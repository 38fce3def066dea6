"""A real kenning daemon (`python -m kenning serve`) on a temporary home and a free port: the one starter the
benches (bench/hook_stdout.py, bench/background_load.py) and the tests' `daemon` fixtures (tests/conftest.py)
share, so each waits for it, names its log and stops it the same way.

The code it runs is the `kenning` this interpreter imports: a "before" measurement points PYTHONPATH at an older
tree's src/ and the daemon (a child with the same environment) runs that tree.
"""

from __future__ import annotations

import os
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
    env: dict[str, str] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str, **params: str | int | float | bool | None) -> httpx.Response:
        return httpx.get(f"{self.base_url}{path}", params=params, timeout=60)

    def client(self, timeout: float = 60.0) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, timeout=timeout)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class PortTaken(RuntimeError):
    pass


def start_daemon(home: Path, config_yaml: str | None = None, extra_env: dict[str, str] | None = None, *,
                 log_name: str = "daemon-test.log", timeout_s: float = START_TIMEOUT_S) -> DaemonProcess:
    """Start `python -m kenning serve` with KENNING_HOME=`home` (its `config.yaml` written from `config_yaml`) on
    a free port and wait until /api/health answers; its output goes to `home/log_name`. Parallel workers pick
    ports independently: a port taken between the pick and the bind is picked again."""
    for attempt in range(3):
        try:
            return _start_daemon(home, config_yaml, extra_env, log_name, timeout_s)
        except PortTaken:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _start_daemon(home: Path, config_yaml: str | None, extra_env: dict[str, str] | None, log_name: str,
                  timeout_s: float) -> DaemonProcess:
    home.mkdir(parents=True, exist_ok=True)
    if config_yaml is not None:
        (home / "config.yaml").write_text(config_yaml)
    port = free_port()
    env = {**os.environ, "KENNING_HOME": str(home), "KENNING_PORT": str(port), **(extra_env or {})}
    log_path = home / log_name
    with open(log_path, "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "kenning", "serve"], env=env, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    daemon = DaemonProcess(home, port, proc, env)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log_tail = log_path.read_text()[-3000:]
            if f"cannot listen on 127.0.0.1:{port}" in log_tail and "KENNING_PORT" not in (extra_env or {}):
                raise PortTaken(log_tail)
            raise RuntimeError(f"daemon exited early: {log_tail}")
        try:
            health = httpx.get(f"{daemon.base_url}/api/health", timeout=1)
            # another worker's daemon may hold the port for a moment: answers naming another home are not ours
            named = health.json().get("home") if health.status_code == 200 else ""
            if named is None or (named and Path(named).resolve() == home.resolve()):
                return daemon
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.2)
    daemon.stop()
    raise RuntimeError(f"daemon did not start: {log_path.read_text()[-3000:]}")
