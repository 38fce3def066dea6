"""m007 (PostgreSQL only): per-lexeme BM25 tables for the full-text side tables.

BM25 read every document holding a query lexeme and unnested its tsvector to find the term
frequency (34 ms p50 at 10k memories, 6x FTS5), and counted each lexeme's documents per query.
`{fts}_terms` holds (lexeme, rid, tf, len) under a primary key on (lexeme, rid), so a query reads
its lexemes' rows from the index alone, and `{fts}_df` the document count per lexeme
(`store.pg.search`). The tables are filled from the existing rows and kept by the sync trigger.
`memory_hints_fts` gets the same when it exists (a store past m016); m016 adds it otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.store.pg.db import PgConnection

from kenning.store.pg.ddl import terms_sql

TABLES = (("memories_fts", "NEW.content || ' ' || NEW.tags"), ("memory_hints_fts", "NEW.hint"))


def up(conn: PgConnection) -> None:
    for fts_table, body in TABLES:
        present, done = conn.raw.execute("SELECT to_regclass(%s), to_regclass(%s)",
                                         (fts_table, f"{fts_table}_terms")).fetchone() or (None, None)
        if present is not None and done is None:
            conn.raw.execute(terms_sql(fts_table, body))
