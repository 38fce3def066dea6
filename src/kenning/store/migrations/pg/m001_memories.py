"""m001 on Postgres: the memories tables as in SQLite; FTS5 becomes a `memories_fts` side table
(rid, tsvector, token count) kept by a trigger, with corpus totals for BM25 (`store.pg.search`).
The text search configuration `kenning` is English stemming without a stop-word list, like
FTS5's `porter unicode61` (the query side drops `store.search.STOP_WORDS`, as for SQLite)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.store.pg.db import PgConnection

from kenning.store.migrations.m001_memories import SCHEMA
from kenning.store.pg.ddl import fts_sql, run_portable

FUNCTIONS = r"""
CREATE TABLE fts_totals (name TEXT PRIMARY KEY, docs BIGINT NOT NULL, tokens BIGINT NOT NULL);
CREATE TEXT SEARCH DICTIONARY kenning_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION kenning (COPY = english);
ALTER TEXT SEARCH CONFIGURATION kenning ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword,
    hword_part WITH kenning_stem;
CREATE FUNCTION kenning_tsv(body text) RETURNS tsvector LANGUAGE sql IMMUTABLE AS
$$ SELECT to_tsvector('kenning'::regconfig, body) $$;
CREATE FUNCTION kenning_tsv_len(v tsvector) RETURNS integer LANGUAGE sql IMMUTABLE AS
$$ SELECT COALESCE(SUM(COALESCE(array_length(positions, 1), 1)), 0)::integer FROM unnest(v) $$;
"""


def up(conn: PgConnection) -> None:
    run_portable(conn, SCHEMA)
    conn.raw.execute(FUNCTIONS)
    conn.raw.execute(fts_sql("memories", "memories_fts", "NEW.content || ' ' || NEW.tags", "content, tags"))
