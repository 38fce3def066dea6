"""m016 on Postgres: memory_hints as in SQLite; its FTS5 index becomes `memory_hints_fts`, with the
per-lexeme BM25 tables m007 gave `memories_fts` (a store migrated before m007 existed gets them from m007)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.store.pg.db import PgConnection

from kenning.store.migrations.m016_hints import SCHEMA
from kenning.store.pg.ddl import fts_sql, run_portable, terms_sql


def up(conn: PgConnection) -> None:
    run_portable(conn, SCHEMA)
    conn.raw.execute(fts_sql("memory_hints", "memory_hints_fts", "NEW.hint", "hint"))
    conn.raw.execute(terms_sql("memory_hints_fts", "NEW.hint"))
