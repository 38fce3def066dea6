"""m056 on Postgres: `code_files.mtime_ns` as BIGINT (a nanosecond file time overflows INTEGER)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.store.pg.db import PgConnection


def up(conn: PgConnection) -> None:
    conn.raw.execute("ALTER TABLE code_files ALTER COLUMN mtime_ns TYPE BIGINT")
