"""Versioned, idempotent migrations.

Each module `mNNN_name.py` in this package defines `up(conn)`; NNN is its version.
Number ranges by capability keep parallel work from colliding: 001-009 foundation,
010-019 pipeline/graph, 020-029 sessions, 030-039 predictor, 040-049 observability,
050-059 observer/code graph, 060-069 teams.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass
from typing import Callable

from kenning.core.clock import now_iso
from kenning.store.backend import Connection, StoreDatabase
from kenning.store.migrations.pg import twins

_NAME = re.compile(r"^m(\d{3})_(\w+)$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    up: Callable[..., None]  # up(conn): the backend's connection


def discover() -> list[Migration]:
    found = []
    for info in pkgutil.iter_modules(__path__):
        match = _NAME.match(info.name)
        if not match:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        found.append(Migration(int(match.group(1)), match.group(2), module.up))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(versions) != len(set(versions)):
        raise RuntimeError(f"duplicate migration versions: {versions}")
    return found


def applied_versions(conn: Connection) -> set[int]:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    return {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}


def for_backend(backend: str) -> list[Migration]:
    """The migrations to run on `backend`: on postgres, each one with a Postgres twin
    (store/migrations/pg) runs the twin instead, and m000 (SQLite's functions) comes first."""
    found = discover()
    if backend != "postgres":
        return found
    pg = twins()
    steps = [Migration(m.version, m.name, pg.pop(m.version, m.up)) for m in found]
    extra = [Migration(version, "postgres", up) for version, up in pg.items()]
    return sorted(steps + extra, key=lambda m: m.version)


def migrate(db: StoreDatabase, *, upto: int | None = None) -> list[int]:
    """Apply every pending migration in order, each in its own write transaction (only those
    numbered up to `upto` when given: tests build a store as an older version left it)."""
    ran = []
    postgres = db.backend == "postgres"
    for migration in for_backend(db.backend):
        if upto is not None and migration.version > upto:
            break
        with db.with_write_tx() as conn:
            if postgres:  # two daemons starting at once: one migrates, the other waits
                from kenning.store.pg.narrow import as_pg

                as_pg(conn).raw.execute("SELECT pg_advisory_xact_lock(1859)")
            if migration.version in applied_versions(conn):
                continue
            migration.up(conn)
            conn.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, now_iso()),
            )
            ran.append(migration.version)
    if ran and not postgres:  # a migration that rewrote rows (m004/m005 redaction) leaves the old
        db.checkpoint()       # page images in the database file until the WAL is copied back
    return ran
