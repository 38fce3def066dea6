"""m016 on Postgres: memory_hints as in SQLite; its FTS5 index becomes `memory_hints_fts`."""

from kenning.store.migrations.m016_hints import SCHEMA
from kenning.store.pg.migrations import fts_sql, run_portable


def up(conn) -> None:
    run_portable(conn, SCHEMA)
    conn.raw.execute(fts_sql("memory_hints", "memory_hints_fts", "NEW.hint", "hint"))
