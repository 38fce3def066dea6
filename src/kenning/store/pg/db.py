"""PostgreSQL connections with the same surface as `store.db.Database` (psycopg 3).

A pool of writer connections (`PostgresDatabase.WRITERS` write transactions at once) and a
reader connection per thread, with SQLite's surface, so the store's functions and their callers
do not change: `with_write_tx()` (nests as SAVEPOINT), `reader()`, `snapshot()`. `PgConnection`
wraps a psycopg connection in the DB-API subset the store uses (`execute` → cursor with
fetchone/fetchall/fetchmany/rowcount/lastrowid, rows that index by position and by name) and translates each statement from the SQLite dialect
(`store.pg.translate`). Client-side binding keeps SQLite's loose parameter typing (a NULL
compared with `?`, a text timestamp passed to `julianday(?)`).

Postgres aborts a whole transaction on a failed statement where SQLite fails only the
statement; the store relies on the latter (`except IntegrityError` after a racing insert),
so inside a write transaction each INSERT/UPDATE runs under a savepoint.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import numpy as np
import psycopg
from psycopg.adapt import Loader
from sqlean import IntegrityError, OperationalError  # the classes store.db names: one except clause for both backends

from kenning.core.errors import StoreError
from kenning.store.backend import Row as StoreRow
from kenning.store.pg.translate import translate

CONNECT_TIMEOUT_S = 10


class PgIntegrityError(IntegrityError):  # type: ignore[misc]  # sqlean ships no types: its exceptions are Any
    """A constraint violation on PostgreSQL, catchable as `store.db.IntegrityError`."""


class PgOperationalError(OperationalError):  # type: ignore[misc]  # (as above)
    """A failed statement on PostgreSQL, catchable as `store.db.OperationalError`."""


class Row(tuple[Any, ...]):
    """A result row: by position like a tuple, by column name like sqlite's Row; dict(row) works."""

    _names: tuple[str, ...] = ()

    def keys(self) -> tuple[str, ...]:
        return self._names

    def __getitem__(self, key: int | str) -> Any:  # type: ignore[override]  # by name too, not by slice
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._names.index(key))
            except ValueError:
                raise IndexError(f"no column named {key!r}") from None
        return tuple.__getitem__(self, key)


_ROW_TYPES: dict[tuple[str, ...], type[Row]] = {}


def _row_factory(cursor: psycopg.Cursor[Any]) -> Callable[[Sequence[Any]], Row]:
    names = tuple(c.name for c in cursor.description or ())
    row_type = _ROW_TYPES.get(names)
    if row_type is None:
        row_type = _ROW_TYPES[names] = type("Row", (Row,), {"_names": names})
    return row_type


class _NumericLoader(Loader):
    """numeric (SUM over bigint, AVG) → int or float, never Decimal (as SQLite returns)."""

    def load(self, data: bytes | bytearray | memoryview) -> int | float:
        value = Decimal(bytes(data).decode())
        return int(value) if value == value.to_integral_value() else float(value)


def _param(value: object) -> object:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, memoryview):
        return bytes(value)
    return value


class PgCursor:
    """The finished result of one statement."""

    def __init__(self, conn: PgConnection, cursor: psycopg.ClientCursor[Row]) -> None:
        self._conn = conn
        self._cursor = cursor
        self.rowcount = cursor.rowcount
        # (name,) per column, as the store's Cursor says (SQLite's description starts with the name too)
        self.description = tuple((c.name,) for c in cursor.description) if cursor.description else None

    def fetchone(self) -> Row | None:
        return self._cursor.fetchone() if self._cursor.description else None

    def fetchall(self) -> list[StoreRow]:
        return [*self._cursor.fetchall()] if self._cursor.description else []

    def fetchmany(self, size: int = 1000) -> list[StoreRow]:
        return [*self._cursor.fetchmany(size)] if self._cursor.description else []

    def __iter__(self) -> Iterator[StoreRow]:
        """Row by row: a long result is never a list (psycopg converts each row as it is reached)."""
        return iter(self._cursor) if self._cursor.description else iter(())

    @property
    def lastrowid(self) -> int:
        """The identity value the last INSERT on this connection drew (SQLite's lastrowid)."""
        return int(scalar(self._conn.raw.execute("SELECT lastval()").fetchone()))


def scalar(row: tuple[Any, ...] | None) -> Any:
    """The first column of a row a statement must return (a count, an id, an existence test)."""
    if row is None:
        raise StoreError("the statement returned no row")
    return row[0]


class PgConnection:
    """A psycopg connection speaking the store's (SQLite-dialect) DB-API subset."""

    backend = "postgres"

    def __init__(self, raw: psycopg.Connection) -> None:
        self.raw = raw
        self.server = (raw.info.host, raw.info.port, raw.info.dbname)  # which database, for caches
        self.settings: dict[str, Any] = {}  # session settings already SET on this connection
        self.in_write_tx = False

    def _table_info(self, table: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return _table_info(self.raw, table)

    def execute(self, sql: str, params: Sequence[object] = ()) -> PgCursor:
        text = translate(sql, self._table_info)
        values = tuple(_param(p) for p in (params or ()))
        cursor = psycopg.ClientCursor(self.raw, row_factory=_row_factory)
        if not (self.in_write_tx and text.lstrip()[:6].upper() in ("INSERT", "UPDATE")):
            try:
                cursor.execute(text, values)
            except psycopg.Error as exc:
                raise _mapped(exc) from exc
            return PgCursor(self, cursor)
        # SAVEPOINT; statement; RELEASE in one round trip (client-side binding allows several
        # statements), so a failed statement is undone alone, as in SQLite.
        statement = cursor.mogrify(text, values)
        try:
            cursor.execute(f"SAVEPOINT stmt; {statement}; RELEASE SAVEPOINT stmt")
        except psycopg.Error as exc:
            self.raw.execute("ROLLBACK TO SAVEPOINT stmt")
            self.raw.execute("RELEASE SAVEPOINT stmt")
            raise _mapped(exc) from exc
        cursor.nextset()  # from SAVEPOINT's result to the statement's
        return PgCursor(self, cursor)

    def executemany(self, sql: str, seq: Iterable[Sequence[object]]) -> PgCursor | None:
        last = None
        for params in seq:
            last = self.execute(sql, params)
        return last

    def close(self) -> None:
        self.raw.close()


def _mapped(exc: psycopg.Error) -> Exception:
    if isinstance(exc, psycopg.IntegrityError):
        return PgIntegrityError(str(exc))
    return PgOperationalError(str(exc))


def _table_info(raw: psycopg.Connection, table: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(primary key columns, all columns) of `table`."""
    keys = raw.execute(
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
        " AND a.attnum = ANY(i.indkey) WHERE i.indrelid = %s::regclass AND i.indisprimary",
        (table,),
    ).fetchall()
    columns = raw.execute(
        "SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
        (table,),
    ).fetchall()
    return tuple(r[0] for r in keys), tuple(r[0] for r in columns)


def connect(url: str) -> psycopg.Connection:
    """An autocommit psycopg connection, with errors a user can act on."""
    try:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StoreError(f"cannot reach PostgreSQL at {redacted(url)}: {first}") from exc
    raw.adapters.register_loader("numeric", _NumericLoader)
    return raw


def redacted(url: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url


class PostgresDatabase:
    """A PostgreSQL database with a pool of writer connections and a reader connection per thread.

    SQLite has one writer, so the store's SQLite handle serialises write transactions. PostgreSQL
    takes concurrent writers, and a team server's daemon has many requests at once (every hook
    writes: a session row, a prompt, an injection): with one writer connection per daemon its writes
    queued behind each other, 25 s for a remember at 50 agents (issue 36). Up to `writers` write
    transactions run at once, each on its own connection; a nested `with_write_tx` in the same
    thread is a SAVEPOINT on that thread's connection. Two daemons on one database were already
    concurrent writers, so the store's writes tolerate it (constraint races end in IntegrityError
    handling; the full-text trigger orders its counters)."""

    backend = "postgres"
    WRITERS = 8

    def __init__(self, url: str, *, read_only: bool = False, writers: int = WRITERS) -> None:
        self.url = url
        self.path = redacted(url)  # shown where SQLite shows its file
        self.read_only = read_only
        self._writers = writers
        self._write_slots = threading.BoundedSemaphore(writers)
        self._idle_writers: list[PgConnection] = []
        self._tx = threading.local()  # this thread's write transaction: .conn, .depth
        self._local = threading.local()
        self._all: list[PgConnection] = []
        self._readers: list[tuple[threading.Thread, PgConnection]] = []  # closed once their thread has ended
        self._all_lock = threading.Lock()
        self._open().close()  # fail now, with a clear message, if the server is unreachable

    def _open(self) -> PgConnection:
        conn = PgConnection(connect(self.url))
        with self._all_lock:
            self._all.append(conn)
        return conn

    def reader(self) -> PgConnection:
        """This thread's reader; the readers of threads that have ended are closed as a new one opens
        (a daemon's short-lived threads kept a server connection each until it stopped, issue 33)."""
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.raw.closed:
            conn = self._local.conn = self._open()
            with self._all_lock:
                ended = [(t, c) for t, c in self._readers if not t.is_alive()]
                self._readers = [(t, c) for t, c in self._readers if t.is_alive()] + [(threading.current_thread(), conn)]
                for _, old in ended:
                    if old in self._all:
                        self._all.remove(old)
            for _, old in ended:
                try:
                    old.close()
                except psycopg.Error:
                    pass
        return conn

    @contextmanager
    def snapshot(self) -> Iterator[PgConnection]:
        conn = self.reader()
        conn.raw.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            yield conn
        finally:
            conn.raw.execute("COMMIT")

    def _take_writer(self) -> PgConnection:
        with self._all_lock:
            while self._idle_writers:
                conn = self._idle_writers.pop()
                if not conn.raw.closed:
                    return conn
                if conn in self._all:
                    self._all.remove(conn)
        return self._open()

    def _return_writer(self, conn: PgConnection) -> None:
        with self._all_lock:
            if not conn.raw.closed and conn in self._all:  # close() may have run meanwhile
                self._idle_writers.append(conn)

    @contextmanager
    def with_write_tx(self) -> Iterator[PgConnection]:
        """One write transaction (SAVEPOINT when nested in this thread's); commit or roll back."""
        if self.read_only:
            raise StoreError("this database handle is read-only")
        conn: PgConnection | None = getattr(self._tx, "conn", None)
        if conn is not None:
            name = f"sp{self._tx.depth}"
            conn.raw.execute(f"SAVEPOINT {name}")
            self._tx.depth += 1
            try:
                yield conn
            except BaseException:
                conn.raw.execute(f"ROLLBACK TO SAVEPOINT {name}")
                conn.raw.execute(f"RELEASE SAVEPOINT {name}")
                raise
            else:
                conn.raw.execute(f"RELEASE SAVEPOINT {name}")
            finally:
                self._tx.depth -= 1
            return
        with self._write_slots:
            conn = self._take_writer()
            try:
                conn.raw.execute("BEGIN")
                self._tx.conn, self._tx.depth = conn, 1
                conn.in_write_tx = True
                try:
                    yield conn
                except BaseException:
                    conn.raw.execute("ROLLBACK")
                    raise
                else:
                    try:
                        conn.raw.execute("COMMIT")
                    except psycopg.Error as exc:
                        raise StoreError(f"could not commit: {exc}") from exc
                finally:
                    conn.in_write_tx = False
                    self._tx.conn, self._tx.depth = None, 0
            finally:
                self._return_writer(conn)

    def checkpoint(self, attempts: int = 40) -> bool:
        """SQLite's WAL truncation has no twin here: the server manages its own WAL."""
        return True

    def close(self) -> None:
        """Close every connection, once the write transactions in flight have ended (up to 30 s)."""
        deadline = time.monotonic() + 30
        held = sum(self._write_slots.acquire(timeout=max(0.0, deadline - time.monotonic()))
                   for _ in range(self._writers))
        try:
            self._close_all()
        finally:
            for _ in range(held):
                self._write_slots.release()

    def _close_all(self) -> None:
        with self._all_lock:
            for conn in self._all:
                try:
                    conn.close()
                except psycopg.Error:
                    pass
            self._all.clear()
            self._readers.clear()
            self._idle_writers.clear()
        self._local = threading.local()


def require_pgvector(db: PostgresDatabase) -> None:
    """Create the pgvector extension if it is missing; a clear error when the server lacks it."""
    conn = db.reader()
    if conn.raw.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return
    available = conn.raw.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
    if not available:
        raise StoreError(f"PostgreSQL at {db.path} has no pgvector extension: install pgvector on the server"
                         " (https://github.com/pgvector/pgvector) and retry")
    try:
        conn.raw.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as exc:
        if conn.raw.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
            return  # another daemon starting on the same database created it at the same moment
        raise StoreError(f"cannot enable pgvector on {db.path} ({str(exc).strip().splitlines()[0]}): run"
                         " 'CREATE EXTENSION vector' as a superuser once") from exc
