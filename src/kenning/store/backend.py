"""The store interface both backends implement, and the one place that picks a backend.

`Database` (SQLite, store/db.py) and `PostgresDatabase` (store/pg/db.py) expose the same
surface: `with_write_tx()`, `reader()`, `snapshot()`, `close()`, `checkpoint()`; their
connections the same DB-API subset. The store's modules are written once against it. The few
operations whose SQL cannot be shared (full-text ranking, vector KNN, job leases, embedding
upserts) branch on `is_postgres(conn)` inside store/ only; nothing outside store/ knows which
backend runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from kenning.core.config_store import StoreSettings
from kenning.core.errors import StoreError


class Row(Protocol):
    """A result row of either backend: by column name or position (sqlean.Row, store.pg.db's row).
    Its values are whatever the column holds (TEXT, INTEGER, REAL, BLOB or NULL)."""

    def __getitem__(self, key: int | str, /) -> Any: ...
    def __iter__(self) -> Iterator[Any]: ...  # the values in column order (`for a, b in rows`)
    def keys(self) -> Sequence[str]: ...


class Cursor(Protocol):
    rowcount: int

    def fetchone(self) -> Any: ...  # Row | None; Any so that `.fetchone()[0]` after COUNT(*) reads plainly
    def fetchall(self) -> list[Row]: ...
    def fetchmany(self, size: int = ...) -> list[Row]: ...
    def __iter__(self) -> Iterator[Row]: ...
    @property
    def lastrowid(self) -> int | None: ...


class Connection(Protocol):
    """What the store's functions call on a connection (SQLite-dialect SQL, `?` parameters)."""

    def execute(self, sql: str, params: Sequence[object] = ...) -> Cursor: ...
    def executemany(self, sql: str, seq: Iterable[Sequence[object]]) -> Cursor: ...


class StoreDatabase(Protocol):
    """A store: one guarded writer, a reader per thread."""

    backend: str
    read_only: bool
    path: Path | str  # the SQLite file, or the PostgreSQL URL without its password

    def with_write_tx(self) -> AbstractContextManager[Connection]: ...
    def reader(self) -> Connection: ...
    def snapshot(self) -> AbstractContextManager[Connection]: ...
    def checkpoint(self, attempts: int = ...) -> bool: ...
    def close(self) -> None: ...


def is_postgres(conn: object) -> bool:
    """True when `conn` is a PostgreSQL connection (store-internal dispatch only)."""
    return getattr(conn, "backend", None) == "postgres"


def open_store(store: StoreSettings, sqlite_path: Path) -> StoreDatabase:
    """Open (creating if needed) and migrate the configured store."""
    from kenning.store.migrations import migrate

    if store.backend == "sqlite":
        from kenning.store.db import Database

        db: StoreDatabase = Database(sqlite_path)
    else:
        from kenning.store.pg.db import PostgresDatabase, require_pgvector

        db = PostgresDatabase(store.url or "")
        require_pgvector(db)
    migrate(db)
    return db


def open_location(location: str | Path, *, read_only: bool = False) -> StoreDatabase:
    """A handle on an existing store given as a SQLite file path or a postgresql:// URL (child
    processes such as the predictor sidecar get the location as an argument)."""
    text = str(location)
    if text.startswith(("postgresql://", "postgres://")):
        from kenning.store.pg.db import PostgresDatabase

        return PostgresDatabase(text, read_only=read_only)
    from kenning.store.db import Database

    return Database(Path(text), read_only=read_only)


def describe(store: StoreSettings, sqlite_path: Path) -> str:
    """Where the store lives, for status lines (no password)."""
    if store.backend == "sqlite":
        return str(sqlite_path)
    from kenning.store.pg.db import redacted

    return redacted(store.url or "")


__all__ = ["Connection", "Cursor", "Row", "StoreDatabase", "StoreError", "describe", "is_postgres", "open_location", "open_store"]
