"""PostgreSQL DDL the Postgres twin migrations (store/migrations/pg) and `store.pg.search` share:
a SQLite migration's statements through the translator (`run_portable`), the full-text side tables
with their sync triggers (`fts_sql`), the per-lexeme BM25 tables (`terms_sql`, `fill_terms_sql`) and
the expressions m024 indexes for session start's queries (`LIVE`, `EFFECTIVE_KEY_PG`)."""

from __future__ import annotations

from kenning.store.backend import Connection
from kenning.store.pg.translate import Untranslatable
from kenning.store.sql_script import statements


LIVE = "{m}is_deleted = 0 AND {m}superseded_by IS NULL"  # {m}: "m." in queries, "" in index predicates
# The order of store.sessions.top_by_effective_score on PostgreSQL, indexed by m024: ln(effective
# score) plus a constant that depends only on `at` (ln(1/0.95) = 0.0512932943875505 per day since
# the last access), pinned first
EFFECTIVE_KEY_PG = ("CASE WHEN {m}pinned = 1 THEN 1e300::float8 ELSE ln(GREATEST({m}importance, 1e-9)::float8)"
                    " + 0.0512932943875505 * julianday(COALESCE({m}last_accessed_at, {m}created_at)) END")


def run_portable(conn: Connection, sql: str) -> None:
    """Run a SQLite migration's statements through the translator, leaving out its triggers and
    FTS5 tables (the calling twin creates their Postgres equivalents)."""
    for statement in list(statements(sql)):
        try:
            conn.execute(statement)
        except Untranslatable:
            continue


def fts_sql(table: str, fts_table: str, body: str, columns: str) -> str:
    """DDL for `fts_table` (rid, tsvector, token count), kept in step with `table` by a trigger on
    `columns` that runs at commit (m008: the counters' row locks are held only that long), and its
    row in fts_totals (documents and tokens, for BM25's average length).
    `body` is the indexed text as an expression over NEW."""
    return f"""
CREATE TABLE {fts_table} (rid BIGINT PRIMARY KEY, fts tsvector NOT NULL, len INTEGER NOT NULL);
CREATE INDEX idx_{fts_table} ON {fts_table} USING gin (fts);
INSERT INTO fts_totals VALUES ('{fts_table}', 0, 0);
CREATE FUNCTION {fts_table}_sync() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v tsvector;
    n integer;
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        DELETE FROM {fts_table} WHERE rid = OLD.rid RETURNING len INTO n;
        IF n IS NOT NULL THEN
            UPDATE fts_totals SET docs = docs - 1, tokens = tokens - n WHERE name = '{fts_table}';
        END IF;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        v := kenning_tsv({body});
        n := kenning_tsv_len(v);
        INSERT INTO {fts_table}(rid, fts, len) VALUES (NEW.rid, v, n);
        UPDATE fts_totals SET docs = docs + 1, tokens = tokens + n WHERE name = '{fts_table}';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER {fts_table}_ai AFTER INSERT ON {table} DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION {fts_table}_sync();
CREATE CONSTRAINT TRIGGER {fts_table}_au AFTER UPDATE OF {columns} ON {table} DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION {fts_table}_sync();
CREATE CONSTRAINT TRIGGER {fts_table}_ad AFTER DELETE ON {table} DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION {fts_table}_sync();
"""


def fill_terms_sql(fts_table: str) -> str:
    """Fill `{fts}_terms` and `{fts}_df` from the tsvector rows already in `fts_table` (m007, and
    `store.pg.search.rebuild_fts` after it empties them)."""
    return f"""INSERT INTO {fts_table}_terms SELECT u.lexeme, f.rid, COALESCE(array_length(u.positions, 1), 1), f.len
    FROM {fts_table} f CROSS JOIN LATERAL unnest(f.fts) u;
INSERT INTO {fts_table}_df SELECT lexeme, count(*) FROM {fts_table}_terms GROUP BY lexeme;"""


def terms_sql(fts_table: str, body: str) -> str:
    """DDL moving `fts_table`'s BM25 inputs into tables a query reads by lexeme: `{fts}_terms`
    (lexeme, rid, term frequency, document length: one row per lexeme of each document, read through
    its primary key alone) and `{fts}_df` (documents per lexeme), both filled from the rows already
    there and kept by the sync trigger from then on. The trigger updates `fts_totals` first, so
    concurrent writers queue on that row before touching the per-lexeme rows (no deadlock).
    The tsvector's GIN index goes: nothing searches through it any more."""
    return f"""
CREATE TABLE {fts_table}_terms (lexeme TEXT NOT NULL, rid BIGINT NOT NULL, tf INTEGER NOT NULL,
    len INTEGER NOT NULL, PRIMARY KEY (lexeme, rid) INCLUDE (tf, len));
CREATE TABLE {fts_table}_df (lexeme TEXT PRIMARY KEY, df BIGINT NOT NULL);
{fill_terms_sql(fts_table)}
DROP INDEX IF EXISTS idx_{fts_table};
CREATE OR REPLACE FUNCTION {fts_table}_sync() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    v tsvector;
    gone tsvector;
    n integer;
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        DELETE FROM {fts_table} WHERE rid = OLD.rid RETURNING len, fts INTO n, gone;
        IF n IS NOT NULL THEN
            UPDATE fts_totals SET docs = docs - 1, tokens = tokens - n WHERE name = '{fts_table}';
            DELETE FROM {fts_table}_terms WHERE lexeme = ANY (tsvector_to_array(gone)) AND rid = OLD.rid;
            UPDATE {fts_table}_df SET df = df - 1 WHERE lexeme = ANY (tsvector_to_array(gone));
        END IF;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        v := kenning_tsv({body});
        n := kenning_tsv_len(v);
        UPDATE fts_totals SET docs = docs + 1, tokens = tokens + n WHERE name = '{fts_table}';
        INSERT INTO {fts_table}(rid, fts, len) VALUES (NEW.rid, v, n);
        INSERT INTO {fts_table}_terms(lexeme, rid, tf, len)
            SELECT lexeme, NEW.rid, COALESCE(array_length(positions, 1), 1), n FROM unnest(v);
        INSERT INTO {fts_table}_df AS d (lexeme, df) SELECT lexeme, 1 FROM unnest(v) ORDER BY lexeme
            ON CONFLICT (lexeme) DO UPDATE SET df = d.df + 1;
    END IF;
    RETURN NULL;
END $$;
"""
