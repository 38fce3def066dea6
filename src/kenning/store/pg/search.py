"""The PostgreSQL side of the candidate queries: BM25 over per-lexeme tables, KNN by pgvector.

BM25 is computed in SQL with FTS5's formula (k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) /
(n + 0.5)) floored at 1e-6), not `ts_rank_cd`, which has no IDF: an OR query of a rare and a
common word then ranks by the common one. Each full-text side table has `{fts}_terms` (lexeme,
rid, term frequency, document length) and `{fts}_df` (documents per lexeme), kept by its trigger
(migration m007), and N and the total length in `fts_totals`: a query reads its lexemes' rows
from the terms primary key alone and ranks them in one statement. Lexemes are Postgres's English
stemmer's, FTS5's are Porter's; both fold case and accents.

Vectors: `embeddings.vec` (pgvector) with one HNSW index (cosine) per dimension, a partial
expression index on `vec::vector(D) WHERE dims = D`, so models of different sizes coexist.
`hnsw.ef_search` follows k (the candidate depth), and iterative scans keep a model filter from
starving the result.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg

from kenning.store.pg.db import PgConnection, _mapped, _param, scalar
from kenning.store.pg.ddl import fill_terms_sql
from kenning.store.pg.translate import translate

K1, B = 1.2, 0.75
MAX_EF_SEARCH = 1000
POSTINGS_WINDOW = 4000  # postings a common lexeme contributes to a BM25 ranking (`_ranked_sql`)
_HNSW_READY: set[tuple[tuple[str, int, str], int]] = set()  # (server, dims)
_HNSW_LOCK = threading.Lock()
HNSW_LOCK_KEY = 1859_000_000  # + dims: the advisory lock of one width's index creation


def _prepared(conn: PgConnection, sql: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
    """The rows of a read statement (SQLite-dialect placeholders, `store.pg.translate`) bound on the
    server and prepared: recall's statements are parsed and planned once per connection, not per
    query (at 10k memories the BM25 statement took 2.5 ms prepared, 7.7 ms bound client-side). Not
    for KNN: its generic plan was no faster (8-11 ms against 7.5-8)."""
    try:
        return conn.raw.execute(translate(sql), [_param(p) for p in params], prepare=True).fetchall()
    except psycopg.Error as exc:
        raise _mapped(exc) from exc


def _ranked_sql(fts_table: str) -> str:
    """A CTE `s` (rid, score) ranking the rows of `fts_table` that hold any query lexeme by BM25,
    best first, at most `depth`; parameters: the query text, the postings window (None: all), the
    window again, depth (None: all). The query's lexemes, their document counts and the corpus
    totals are read in the same statement.

    Top-k pruning by a bounded candidate set: a lexeme in more documents than the window (a
    *common* one) contributes only its `window` newest postings (the primary key read backwards);
    a *rare* lexeme contributes all of them. Every document holding a rare query lexeme is scored
    exactly (its common lexemes looked up by key, `OFFSET 0` keeps those lookups a nested loop);
    a document holding only common ones is a candidate through the windows it is in, scored from
    them. With no common lexeme (every lexeme in at most `window` documents: any small store) the
    ranking is exact. At a million memories a common lexeme has 40-110k postings: summing them
    all took 0.3-1.1 s per query."""
    norm = f"(x.tf + {K1 * (1 - B):g}::float8 + t.per_len * x.len)"
    return f"""
WITH t AS (SELECT docs::float8 AS docs, {K1 * B:g}::float8 / GREATEST(tokens::float8 / GREATEST(docs, 1), 1) AS per_len
           FROM fts_totals WHERE name = '{fts_table}'),
q AS (SELECT d.lexeme, GREATEST(ln(GREATEST((t.docs - d.df + 0.5) / (d.df + 0.5::float8), 1e-9)), 1e-6) AS idf,
             COALESCE(d.df > ?::bigint, false) AS common
      FROM (SELECT DISTINCT lexeme FROM unnest(kenning_tsv(?))) l
      JOIN {fts_table}_df d ON d.lexeme = l.lexeme CROSS JOIN t WHERE d.df > 0),
p AS MATERIALIZED (SELECT q.common, x.rid, q.idf * x.tf / {norm} AS w FROM q CROSS JOIN t
      CROSS JOIN LATERAL (SELECT rid, tf, len FROM {fts_table}_terms WHERE lexeme = q.lexeme
                          ORDER BY rid DESC LIMIT ?::bigint) x),
r AS MATERIALIZED (SELECT DISTINCT rid FROM p WHERE NOT common),
s AS (SELECT a.rid, SUM(a.w) * {K1 + 1:g}::float8 AS score FROM (
          SELECT rid, w FROM p WHERE NOT common OR rid NOT IN (SELECT rid FROM r)
          UNION ALL
          SELECT r.rid, q.idf * x.tf / {norm} FROM r CROSS JOIN q CROSS JOIN t
          CROSS JOIN LATERAL (SELECT tf, len FROM {fts_table}_terms y WHERE y.lexeme = q.lexeme AND y.rid = r.rid
                              OFFSET 0) x WHERE q.common) a
      GROUP BY a.rid ORDER BY score DESC, a.rid LIMIT ?)"""


def bm25(conn: PgConnection, fts_table: str, tokens: list[str], depth: int | None,
         window: int | None = POSTINGS_WINDOW) -> list[tuple[int, float]]:
    """(rid, BM25 score — higher is better) of the rows of `fts_table` matching any token, best
    first, at most `depth` (None: all); `window`: see `_ranked_sql` (None: exact)."""
    if not tokens:
        return []
    rows = _prepared(conn, f"{_ranked_sql(fts_table)} SELECT rid, score FROM s ORDER BY score DESC, rid",
                     (window, " ".join(tokens), window, depth))
    return [(int(r[0]), float(r[1])) for r in rows]


def bm25_search_sql(where: str) -> str:
    """`bm25_search`'s statement (SQLite dialect); parameters: window, query text, window, depth,
    the filter's, limit."""
    return (f"{_ranked_sql('memories_fts')} SELECT m.id, s.score, (SELECT count(*) FROM s) FROM s"
            f" JOIN memories m ON m.rid = s.rid WHERE {where} ORDER BY s.score DESC, s.rid LIMIT ?")


def bm25_filtered_sql(where: str) -> str:
    """The exact BM25 ranking of only the memories passing `where`: the filter joins the postings
    before the sums, so a selective filter (a small project) drives the plan from its own rows;
    parameters: query text, the filter's, limit."""
    return f"""
WITH t AS (SELECT docs::float8 AS docs, {K1 * B:g}::float8 / GREATEST(tokens::float8 / GREATEST(docs, 1), 1) AS per_len
           FROM fts_totals WHERE name = 'memories_fts'),
q AS (SELECT d.lexeme, GREATEST(ln(GREATEST((t.docs - d.df + 0.5) / (d.df + 0.5::float8), 1e-9)), 1e-6) AS idf
      FROM (SELECT DISTINCT lexeme FROM unnest(kenning_tsv(?))) l
      JOIN memories_fts_df d ON d.lexeme = l.lexeme CROSS JOIN t WHERE d.df > 0)
SELECT m.id, SUM(q.idf * p.tf / (p.tf + {K1 * (1 - B):g}::float8 + t.per_len * p.len)) * {K1 + 1:g}::float8 AS score
FROM q JOIN memories_fts_terms p ON p.lexeme = q.lexeme JOIN memories m ON m.rid = p.rid CROSS JOIN t
WHERE {where} GROUP BY m.id, m.rid ORDER BY score DESC, m.rid LIMIT ?"""


def bm25_filtered(conn: PgConnection, tokens: list[str], where: str, params: list[object],
                  limit: int) -> list[tuple[str, float]]:
    """(memory_id, BM25 score) of the `limit` best memories passing `where`, exact (no window):
    what `bm25_search` ends with when a filter leaves too few of the best-ranked."""
    if not tokens:
        return []
    rows = _prepared(conn, bm25_filtered_sql(where), (" ".join(tokens), *params, limit))
    return [(r[0], float(r[1])) for r in rows]


def bm25_search(conn: PgConnection, tokens: list[str], where: str, params: list[object], limit: int,
                depth: int | None, window: int | None = POSTINGS_WINDOW) -> tuple[list[tuple[str, float]], int]:
    """(memory_id, BM25 score) of the memories passing `where` (SQLite-dialect conditions on `m`,
    from `store.memories.filter_sql`) among the `depth` best-ranked, best first, at most `limit`;
    and how many rows were ranked (fewer than depth: there are no more). One statement."""
    if not tokens:
        return [], 0
    rows = _prepared(conn, bm25_search_sql(where), (window, " ".join(tokens), window, depth, *params, limit))
    found = int(rows[0][2]) if rows else (depth or 0)  # none passed: unknown, as if the ranking were full
    return [(r[0], float(r[1])) for r in rows], found


def vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in np.asarray(vector, dtype=np.float32).reshape(-1)) + "]"


def ensure_hnsw(conn: PgConnection, dims: int) -> None:
    """The HNSW index over `dims`-dimensional vectors (created once per database, by the first
    write of such a vector). `CREATE INDEX IF NOT EXISTS` takes a share lock on the table even
    when the index exists, held to the end of the write transaction: with concurrent writers
    (two daemons, a daemon's writer pool) that deadlocked against their embedding inserts. So
    the catalog is asked first, and only a missing index is created, under an advisory lock and
    asked again once that lock is held (another writer may have just created it)."""
    key = (conn.server, dims)
    if key in _HNSW_READY:
        return
    name = f"idx_embeddings_hnsw_{dims}"
    with _HNSW_LOCK:
        if key in _HNSW_READY:
            return
        exists = "SELECT to_regclass(%s) IS NOT NULL"
        if not scalar(conn.raw.execute(exists, (name,)).fetchone()):
            conn.raw.execute("SELECT pg_advisory_xact_lock(%s)", (HNSW_LOCK_KEY + dims,))
            if not scalar(conn.raw.execute(exists, (name,)).fetchone()):
                conn.raw.execute(f"CREATE INDEX IF NOT EXISTS {name} ON embeddings"
                                 f" USING hnsw ((vec::vector({dims})) vector_cosine_ops) WHERE dims = {dims}")
        _HNSW_READY.add(key)


def _set_ef_search(conn: PgConnection, k: int) -> None:
    """`hnsw.ef_search` for a depth-k scan: a quarter of k (at least pgvector's 40), the iterative
    scan fetches the rest. At 10k memories ef_search = k took 18 ms for k = 400, k / 4 3-6 ms, with
    the same top 10 and 98 % of the top 400 (against an exact scan). One SET per change, not per
    query; inside a transaction always (a rollback undoes a SET)."""
    raw = conn.raw
    ef_search = min(max(k // 4, 40), MAX_EF_SEARCH)
    idle = raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    if not idle or conn.settings.get("hnsw.ef_search") != ef_search:
        raw.execute(f"SET hnsw.ef_search = {ef_search}; SET hnsw.iterative_scan = relaxed_order")
        conn.settings["hnsw.ef_search"] = ef_search if idle else None


def _nearest_sql(dims: int) -> str:
    """The k nearest vectors of one model (content_hash, cosine distance) as a subquery; its
    parameters: vector, model, vector, k."""
    return (f"SELECT content_hash, vec::vector({dims}) <=> ?::vector({dims}) AS dist FROM embeddings"
            f" WHERE dims = {dims} AND model = ? ORDER BY vec::vector({dims}) <=> ?::vector({dims}) LIMIT ?")


def knn(conn: PgConnection, vector: np.ndarray, model: str, k: int) -> list[tuple[str, float]]:
    """(content_hash, cosine similarity) of the k nearest `model` vectors, best first."""
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    if k <= 0:
        return []
    _set_ef_search(conn, k)
    literal = vector_literal(query)
    rows = conn.execute(f"SELECT content_hash, 1 - dist FROM ({_nearest_sql(int(query.shape[0]))}) k ORDER BY dist",
                        (literal, model, literal, k)).fetchall()
    return [(r[0], float(r[1])) for r in rows]


def vector_search_sql(dims: int, where: str) -> str:
    """`vector_search`'s statement (SQLite dialect); parameters: vector, model, the filter's,
    vector, limit."""
    return (f"WITH k AS MATERIALIZED (SELECT m.id, e.vec::vector({dims}) <=> ?::vector({dims}) AS dist"
            f" FROM embeddings e JOIN memories m ON m.content_hash = e.content_hash"
            f" WHERE e.dims = {dims} AND e.model = ? AND {where}"
            f" ORDER BY e.vec::vector({dims}) <=> ?::vector({dims}) LIMIT ?)"
            " SELECT id, 1 - dist FROM k ORDER BY dist, id")


def vector_search(conn: PgConnection, vector: np.ndarray, model: str, where: str, params: list[object],
                  limit: int) -> list[tuple[str, float]]:
    """(memory_id, cosine similarity) of the `limit` nearest memories passing `where`
    (SQLite-dialect conditions on `m`, from `store.memories.filter_sql`), best first. One statement:
    the HNSW scan feeds the filter join row by row and pgvector's iterative scan goes on past
    ef_search until `limit` rows pass or `hnsw.max_scan_tuples` were visited (relaxed order,
    sorted again here). Fewer than `limit` means the filter passes few memories near enough for
    the scan: the caller finishes with an exact scan of the filtered ones. Before, a KNN of
    fixed depth was joined to the filter and deepened 8x: with a project filter at a million
    memories (1 in 20 passes) both depths fell short, and the exact scan read 50k vectors."""
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    _set_ef_search(conn, 4 * limit)
    literal = vector_literal(query)
    rows = conn.execute(vector_search_sql(int(query.shape[0]), where),
                        (literal, model, *params, literal, limit)).fetchall()
    return [(r[0], float(r[1])) for r in rows]


def upsert_embedding(conn: PgConnection, content_hash: str, model: str, vector: np.ndarray, created_at: str) -> int:
    dims = int(np.asarray(vector).shape[-1])
    ensure_hnsw(conn, dims)
    row = conn.raw.execute(
        "INSERT INTO embeddings(content_hash, model, dims, vector, vec, created_at)"
        " VALUES (%s, %s, %s, %s, %s::vector, %s) ON CONFLICT (content_hash, model) DO NOTHING RETURNING rid",
        (content_hash, model, dims, np.asarray(vector, dtype=np.float32).tobytes(), vector_literal(vector), created_at),
    ).fetchone()
    if row is not None:
        return int(row[0])
    return int(scalar(conn.raw.execute("SELECT rid FROM embeddings WHERE content_hash = %s AND model = %s",
                                       (content_hash, model)).fetchone()))


def lease_job(conn: PgConnection, job_types: Sequence[str], worker_id: str, now: str) -> dict[str, object] | None:
    """Take the oldest ready pending job: FOR UPDATE SKIP LOCKED, so concurrent workers in any
    number of processes never wait on or take the same row."""
    marks = ",".join("%s" for _ in job_types)
    cursor = conn.raw.cursor()
    cursor.execute(
        "UPDATE memory_jobs SET status = 'leased', leased_at = %s, leased_by = %s, attempts = attempts + 1,"
        " updated_at = %s WHERE id = (SELECT id FROM memory_jobs WHERE status = 'pending'"
        f" AND job_type IN ({marks}) AND run_after <= %s ORDER BY priority DESC, created_at, id LIMIT 1"
        " FOR UPDATE SKIP LOCKED) RETURNING *",
        (now, worker_id, now, *job_types, now),
    )
    row = cursor.fetchone()
    if row is None:
        return None
    return dict(zip([c.name for c in cursor.description or ()], row))


def rebuild_fts(conn: PgConnection) -> None:
    """Rebuild the memories' full-text rows from the memories table, as FTS5's 'rebuild' does: the
    tsvector side table, its per-lexeme BM25 tables (m007) and its totals, in the caller's write
    transaction (the same text expression as the sync trigger's). The postings' primary key is
    built once after the fill, not row by row (12M postings at 1M memories)."""
    conn.raw.execute(f"""
TRUNCATE memories_fts, memories_fts_terms, memories_fts_df;
INSERT INTO memories_fts(rid, fts, len)
    SELECT rid, v, kenning_tsv_len(v) FROM (SELECT rid, kenning_tsv(content || ' ' || tags) AS v FROM memories) t;
ALTER TABLE memories_fts_terms DROP CONSTRAINT memories_fts_terms_pkey;
{fill_terms_sql("memories_fts")}
ALTER TABLE memories_fts_terms ADD PRIMARY KEY (lexeme, rid) INCLUDE (tf, len);
UPDATE fts_totals SET docs = (SELECT count(*) FROM memories_fts),
    tokens = (SELECT COALESCE(sum(len), 0) FROM memories_fts) WHERE name = 'memories_fts';
""")
