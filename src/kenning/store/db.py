"""SQLite connections: WAL, one guarded writer, per-thread readers.

We use `sqlean.py`, a drop-in DB-API binding with its own recent SQLite (FTS5, JSON,
extension loading) on Linux, macOS and Windows, so behaviour does not depend on how the
user's Python was built (the stdlib sqlite3 of many Pythons cannot load extensions).
`with_write_tx()` is the only way to write; it retries BEGIN IMMEDIATE on a busy
database so that "database is locked" never reaches a caller, and nests as a SAVEPOINT.
"""

from __future__ import annotations

import errno
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import sqlean

from kenning.core.errors import DiskFull, StoreError
from kenning.store.migrations import migrate

if TYPE_CHECKING:  # sqlean ships no types; it is a drop-in for the stdlib's sqlite3, whose stubs describe it
    from sqlite3 import IntegrityError as IntegrityError, OperationalError as OperationalError, Row as Row

    from kenning.store.backend import Connection as StoreConnection, SqliteConnection as Connection
else:
    Connection = sqlean.Connection
    Row = sqlean.Row
    OperationalError = sqlean.OperationalError
    IntegrityError = sqlean.IntegrityError

BUSY_TIMEOUT_MS = 5_000
WRITE_RETRY_SECONDS = 30.0


def _open(path: Path | str, *, read_only: bool = False) -> Connection:
    conn: Connection
    if read_only:
        conn = sqlean.connect(
            f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
        )
    else:
        conn = sqlean.connect(str(path), check_same_thread=False, isolation_level=None)
    conn.row_factory = sqlean.Row
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA secure_delete=ON")  # deleted content is zeroed, not left in free space (purge)
    if not read_only:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def _is_busy(exc: Exception) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


SQLITE_FULL = 13


def disk_full(exc: BaseException) -> bool:
    """SQLite's SQLITE_FULL ("database or disk is full") or the OS's ENOSPC."""
    if isinstance(exc, OSError):
        return exc.errno == errno.ENOSPC
    if isinstance(exc, sqlean.Error):
        return getattr(exc, "sqlite_errorcode", None) == SQLITE_FULL or "disk is full" in str(exc).lower()
    return False


def _disk_full_error(exc: BaseException) -> DiskFull:
    return DiskFull(f"disk is full: the write was not stored ({exc}); free space on the disk holding the database")


def _rollback(conn: Connection) -> None:
    try:
        conn.execute("ROLLBACK")
    except OperationalError:
        pass  # SQLite already rolled back (it does on SQLITE_FULL)


class Database:
    """A SQLite file with one writer connection and a reader connection per thread. A reader is
    closed once its thread has ended (the next new reader closes those of threads gone): a daemon
    runs short-lived threads — an idle check, a spool replay, a request pool's workers — and kept
    every one's connection (its files open) until it stopped (issue 33)."""

    backend = "sqlite"

    def __init__(self, path: Path | str, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        if not read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.exists():
            raise StoreError(f"database {self.path} does not exist")
        self._write_lock = threading.RLock()
        self._writer: Connection | None = None
        self._depth = 0
        self._local = threading.local()
        self._all_readers: list[tuple[threading.Thread, Connection]] = []  # (its thread, the reader)
        self._readers_lock = threading.Lock()

    # -- readers -----------------------------------------------------------
    def reader(self) -> Connection:
        """This thread's read connection (autocommit; each statement sees the latest commit)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = _open(self.path, read_only=self.read_only)
            self._local.conn = conn
            with self._readers_lock:
                self._close_orphans()
                self._all_readers.append((threading.current_thread(), conn))
        return conn

    def _close_orphans(self) -> None:
        """Close the readers of threads that have ended (under _readers_lock)."""
        kept: list[tuple[threading.Thread, Connection]] = []
        for thread, conn in self._all_readers:
            if thread.is_alive():
                kept.append((thread, conn))
                continue
            try:
                conn.close()
            except sqlean.Error:
                pass
        self._all_readers = kept

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """A read transaction: several queries that see one consistent state."""
        conn = self.reader()
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            conn.execute("COMMIT")

    # -- the writer ----------------------------------------------------------
    def _writer_conn(self) -> Connection:
        if self.read_only:
            raise StoreError("this database handle is read-only")
        if self._writer is None:
            self._writer = _open(self.path)
        return self._writer

    @contextmanager
    def with_write_tx(self) -> Iterator[Connection]:
        """Run the block in one write transaction (SAVEPOINT when nested); commit or roll back.

        Never call an LLM, the network or an embedding model inside this block.
        """
        with self._write_lock:
            conn = self._writer_conn()
            if self._depth > 0:
                name = f"sp{self._depth}"
                conn.execute(f"SAVEPOINT {name}")
                self._depth += 1
                try:
                    yield conn
                except BaseException:
                    try:
                        conn.execute(f"ROLLBACK TO {name}")
                        conn.execute(f"RELEASE {name}")
                    except OperationalError:
                        pass  # the whole transaction was rolled back already (SQLITE_FULL does that)
                    raise
                else:
                    conn.execute(f"RELEASE {name}")
                finally:
                    self._depth -= 1
                return
            self._begin_immediate(conn)
            self._depth = 1
            try:
                yield conn
            except BaseException as exc:
                _rollback(conn)
                if disk_full(exc):
                    raise _disk_full_error(exc) from exc
                raise
            else:
                self._commit(conn)
            finally:
                self._depth = 0

    @staticmethod
    def _begin_immediate(conn: Connection) -> None:
        deadline = time.monotonic() + WRITE_RETRY_SECONDS
        delay = 0.005
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() > deadline:
                    raise StoreError(f"could not start a write transaction: {exc}") from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.2)

    @staticmethod
    def _commit(conn: Connection) -> None:
        deadline = time.monotonic() + WRITE_RETRY_SECONDS
        while True:
            try:
                conn.execute("COMMIT")
                return
            except OperationalError as exc:
                if not _is_busy(exc) or time.monotonic() > deadline:
                    _rollback(conn)
                    if disk_full(exc):
                        raise _disk_full_error(exc) from exc
                    raise StoreError(f"could not commit: {exc}") from exc
                time.sleep(0.01)

    def checkpoint(self, attempts: int = 40) -> bool:
        """Copy the WAL into the database and truncate it to zero bytes (after a purge, the WAL
        still holds old page images). Retries while readers pin it; True when it truncated."""
        for _ in range(attempts):
            with self._write_lock:
                busy = self._writer_conn().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            if not busy:
                return True
            time.sleep(0.05)
        return False

    def close(self) -> None:
        with self._write_lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
        with self._readers_lock:
            for _, conn in self._all_readers:
                try:
                    conn.close()
                except sqlean.ProgrammingError:
                    pass
            self._all_readers.clear()
        self._local = threading.local()


def open_database(path: Path | str) -> Database:
    """Open (creating if needed) and migrate the database at `path`."""
    db = Database(path)
    migrate(db)
    return db


@contextmanager
def savepoint(conn: StoreConnection, name: str) -> Iterator[StoreConnection]:
    """A named savepoint inside an open write transaction: the block's changes are kept, or
    rolled back alone (the enclosing transaction goes on) when it raises."""
    conn.execute(f"SAVEPOINT {name}")
    try:
        yield conn
    except BaseException:
        conn.execute(f"ROLLBACK TO {name}")
        conn.execute(f"RELEASE {name}")
        raise
    conn.execute(f"RELEASE {name}")
