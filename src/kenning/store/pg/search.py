"""The PostgreSQL side of the candidate queries: BM25 over tsvector side tables, KNN by pgvector.

BM25 is computed in SQL with FTS5's formula (k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) /
(n + 0.5)) floored at 1e-6), not `ts_rank_cd`, which has no IDF: an OR query of a rare and a
common word then ranks by the common one. Term frequencies come from the tsvector's positions,
document lengths from the side table (`len`), N and the average length from `fts_totals`
(kept by the same trigger). Lexemes are Postgres's English stemmer's, FTS5's are Porter's;
both fold case and accents.

Vectors: `embeddings.vec` (pgvector) with one HNSW index (cosine) per dimension, a partial
expression index on `vec::vector(D) WHERE dims = D`, so models of different sizes coexist.
`hnsw.ef_search` follows k (the candidate depth), and iterative scans keep a model filter from
starving the result.
"""

from __future__ import annotations

import numpy as np

K1, B = 1.2, 0.75
MAX_EF_SEARCH = 1000
_HNSW_READY: set[tuple[str, int]] = set()


def bm25(conn, fts_table: str, tokens: list[str], depth: int | None) -> list[tuple[int, float]]:
    """(rid, BM25 score — higher is better) of the rows matching any token, best first."""
    if not tokens:
        return []
    limit = "LIMIT %s" if depth else ""
    sql = f"""
WITH ql AS (SELECT DISTINCT lexeme FROM unnest(kenning_tsv(%s))),
tot AS (SELECT docs, GREATEST(tokens::float8 / GREATEST(docs, 1), 1) AS avgdl FROM fts_totals WHERE name = %s),
q AS (SELECT ql.lexeme, GREATEST(ln((tot.docs - d.n + 0.5) / (d.n + 0.5)), 1e-6) AS idf
      FROM ql CROSS JOIN tot CROSS JOIN LATERAL
      (SELECT count(*) AS n FROM {fts_table} f WHERE f.fts @@ quote_literal(ql.lexeme)::tsquery) d),
hits AS (SELECT f.rid, f.fts, f.len / tot.avgdl AS rel FROM {fts_table} f CROSS JOIN tot
         WHERE f.fts @@ (SELECT string_agg(quote_literal(lexeme), ' | ')::tsquery FROM ql))
SELECT h.rid, SUM(q.idf * t.tf * {K1 + 1} / (t.tf + {K1} * ({1 - B} + {B} * h.rel))) AS score
FROM hits h CROSS JOIN LATERAL unnest(h.fts) u JOIN q ON q.lexeme = u.lexeme
CROSS JOIN LATERAL (SELECT COALESCE(array_length(u.positions, 1), 1)::float8 AS tf) t
GROUP BY h.rid ORDER BY score DESC, h.rid {limit}"""
    params = [" ".join(tokens), fts_table] + ([depth] if depth else [])
    return [(int(r[0]), float(r[1])) for r in conn.raw.execute(sql, params).fetchall()]


def vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in np.asarray(vector, dtype=np.float32).reshape(-1)) + "]"


def ensure_hnsw(conn, dims: int) -> None:
    """The HNSW index over `dims`-dimensional vectors (created once per database)."""
    key = (conn.raw.info.dsn, dims)
    if key in _HNSW_READY:
        return
    conn.raw.execute(
        f"CREATE INDEX IF NOT EXISTS idx_embeddings_hnsw_{dims} ON embeddings"
        f" USING hnsw ((vec::vector({dims})) vector_cosine_ops) WHERE dims = {dims}"
    )
    _HNSW_READY.add(key)


def knn(conn, vector: np.ndarray, model: str, k: int) -> list[tuple[str, float]]:
    """(content_hash, cosine similarity) of the k nearest `model` vectors, best first."""
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    dims = int(query.shape[0])
    if k <= 0:
        return []
    raw = conn.raw
    raw.execute(f"SET hnsw.ef_search = {min(max(k, 40), MAX_EF_SEARCH)}")
    raw.execute("SET hnsw.iterative_scan = relaxed_order")
    rows = raw.execute(
        f"SELECT content_hash, 1 - (vec::vector({dims}) <=> %s::vector({dims})) FROM embeddings"
        f" WHERE dims = {dims} AND model = %s ORDER BY vec::vector({dims}) <=> %s::vector({dims}) LIMIT %s",
        (vector_literal(query), model, vector_literal(query), k),
    ).fetchall()
    hits = [(r[0], float(r[1])) for r in rows]
    hits.sort(key=lambda hit: -hit[1])  # relaxed_order may return near-ties out of order
    return hits


def upsert_embedding(conn, content_hash: str, model: str, vector: np.ndarray, created_at: str) -> int:
    dims = int(np.asarray(vector).shape[-1])
    ensure_hnsw(conn, dims)
    row = conn.raw.execute(
        "INSERT INTO embeddings(content_hash, model, dims, vector, vec, created_at)"
        " VALUES (%s, %s, %s, %s, %s::vector, %s) ON CONFLICT (content_hash, model) DO NOTHING RETURNING rid",
        (content_hash, model, dims, np.asarray(vector, dtype=np.float32).tobytes(), vector_literal(vector), created_at),
    ).fetchone()
    if row is not None:
        return int(row[0])
    return int(conn.raw.execute("SELECT rid FROM embeddings WHERE content_hash = %s AND model = %s",
                                (content_hash, model)).fetchone()[0])


def lease_job(conn, job_types, worker_id: str, now: str):
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
    return dict(zip([c.name for c in cursor.description], row))
