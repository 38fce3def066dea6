"""The store interface both backends implement (store.factory picks one).

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

from kenning.core.errors import StoreError


SqlValue = str | int | float | bytes | None  # what a column holds (TEXT, INTEGER, REAL, BLOB, NULL)
# A row read by column name (`dict(row)`) where the reader knows its table only loosely: the
# schema-tolerant reads (SELECT * of tables another capability owns, e.g. store.timeline).
TableRow = dict[str, SqlValue]


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
    @property
    def description(self) -> Sequence[Sequence[object]] | None: ...  # one entry per column, its name first


class Connection(Protocol):
    """What the store's functions call on a connection (SQLite-dialect SQL, `?` parameters)."""

    def execute(self, sql: str, params: Sequence[object] = ...) -> Cursor: ...
    def executemany(self, sql: str, seq: Iterable[Sequence[object]]) -> object: ...  # the result is not read


class SqliteConnection(Connection, Protocol):
    """A SQLite connection (sqlean's, typed by the stdlib sqlite3 it mirrors): the store's interface and
    what store/db.py and the extension-loading migration call besides."""

    row_factory: object

    def close(self) -> None: ...
    def enable_load_extension(self, enabled: bool, /) -> None: ...


class StoreDatabase(Protocol):
    """A store: one guarded writer, a reader per thread."""

    backend: str
    read_only: bool
    @property
    def path(self) -> Path | str: ...  # the SQLite file, or the PostgreSQL URL without its password

    def with_write_tx(self) -> AbstractContextManager[Connection]: ...
    def reader(self) -> Connection: ...
    def snapshot(self) -> AbstractContextManager[Connection]: ...
    def checkpoint(self, attempts: int = ...) -> bool: ...
    def close(self) -> None: ...


def inserted_id(cursor: Cursor) -> int:
    """The rowid (SQLite) or identity (PostgreSQL) an INSERT just drew."""
    rowid = cursor.lastrowid
    if rowid is None:
        raise StoreError("the insert drew no row id")
    return rowid


def is_postgres(conn: object) -> bool:
    """True when `conn` is a PostgreSQL connection (store-internal dispatch only)."""
    return getattr(conn, "backend", None) == "postgres"


__all__ = ["Connection", "Cursor", "Row", "SqlValue", "SqliteConnection", "StoreDatabase", "StoreError", "TableRow",
           "inserted_id", "is_postgres"]
