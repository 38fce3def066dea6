"""m056: a file's modification time in nanoseconds needs 64 bits.

On SQLite an INTEGER is already 64-bit, so this version has nothing to do there; its
PostgreSQL twin (store/migrations/pg/m056) widens `code_files.mtime_ns` from INTEGER (32-bit
on PostgreSQL), which refused every real file time with "integer out of range"."""

from __future__ import annotations

from kenning.store.backend import Connection


def up(conn: Connection) -> None:
    del conn  # SQLite's INTEGER holds nanoseconds since 1970 as it is
