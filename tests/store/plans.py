"""The plan a store's backend would run a query with, for tests that pin an index (issue 36)."""

from __future__ import annotations

from kenning.store.pg.narrow import as_pg


def plan_of(db, query: str) -> str:
    """EXPLAIN (PostgreSQL) or EXPLAIN QUERY PLAN (SQLite) of `query`, as one string. On PostgreSQL
    sequential and bitmap scans are off for it: a test table of a few rows still shows whether an
    index could serve the query."""
    if db.backend != "postgres":
        return " ".join(str(r[-1]) for r in db.reader().execute("EXPLAIN QUERY PLAN " + query).fetchall())
    with db.with_write_tx() as conn:  # SET LOCAL ends with the transaction
        raw = as_pg(conn).raw
        raw.execute("SET LOCAL enable_seqscan = off")
        raw.execute("SET LOCAL enable_bitmapscan = off")
        return " ".join(str(r[0]) for r in raw.execute("EXPLAIN " + query).fetchall())
