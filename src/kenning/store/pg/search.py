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

import math
import time

import numpy as np
import psycopg

K1, B = 1.2, 0.75
MAX_EF_SEARCH = 1000
_HNSW_READY: set[tuple[str, int]] = set()


def bm25(conn, fts_table: str, tokens: list[str], depth: int | None) -> list[tuple[int, float]]:
    """(rid, BM25 score — higher is better) of the rows matching any token, best first.

    Scoring every row that holds a common word costs a heap visit per row (at 100k memories an OR
    query with 'service' visits tens of thousands), so candidates come from the query's selective
    lexemes (in at most COMMON_FRACTION of the rows) and are scored on all lexemes; a query of
    common words only takes the rows holding all of them first. Document frequencies: exact
    counts, capped at DF_CAP rows (beyond it ANALYZE's lexeme frequencies, when present, refine it).
    """
    if not tokens:
        return []
    lexemes, df, docs, avgdl = _query_lexemes(conn, fts_table, tokens)
    if not lexemes:
        return []
    _refine_common(conn, fts_table, df, docs)
    idf = {lex: max(math.log((docs - n + 0.5) / (n + 0.5)), 1e-6) for lex, n in df.items()}
    selective = [lex for lex in lexemes if df[lex] <= max(COMMON_FRACTION * docs, DF_CAP // 2)]
    if selective:
        return _score(conn, fts_table, " | ".join(map(_quoted, selective)), idf, avgdl, depth)
    ranked = _score(conn, fts_table, " & ".join(map(_quoted, lexemes)), idf, avgdl, depth)
    if depth is not None and len(ranked) >= depth:
        return ranked
    seen = {rid for rid, _ in ranked}
    rest = _score(conn, fts_table, " | ".join(map(_quoted, lexemes)), idf, avgdl, depth)
    return ranked + [hit for hit in rest if hit[0] not in seen][: (depth or len(rest)) - len(ranked)]


COMMON_FRACTION = 0.02
DF_CAP = 2000
STATS_TTL_S = 60.0
_STATS: dict[tuple, tuple[float, dict[str, float]]] = {}


def _quoted(lexeme: str) -> str:
    return "'" + lexeme.replace("'", "''") + "'"


def _query_lexemes(conn, fts_table: str, tokens: list[str]) -> tuple[list[str], dict[str, float], int, float]:
    """The query's lexemes with their document counts (capped at DF_CAP), N and the average
    document length, in one round trip."""
    rows = conn.raw.execute(
        f"SELECT l.lexeme, (SELECT count(*) FROM (SELECT 1 FROM {fts_table} f"
        f" WHERE f.fts @@ quote_literal(l.lexeme)::tsquery LIMIT {DF_CAP}) capped), t.docs,"
        " GREATEST(t.tokens::float8 / GREATEST(t.docs, 1), 1)"
        " FROM (SELECT DISTINCT lexeme FROM unnest(kenning_tsv(%s))) l, fts_totals t WHERE t.name = %s",
        (" ".join(tokens), fts_table),
    ).fetchall()
    if not rows:
        return [], {}, 0, 1.0
    return [r[0] for r in rows], {r[0]: float(r[1]) for r in rows}, int(rows[0][2]), float(rows[0][3])


def _common_frequencies(conn, fts_table: str) -> dict[str, float]:
    """ANALYZE's most common lexemes of the table with their document fractions (cached)."""
    key = (conn.server, fts_table)
    cached = _STATS.get(key)
    if cached and time.monotonic() - cached[0] < STATS_TTL_S:
        return cached[1]
    row = conn.raw.execute(
        "SELECT most_common_elems::text::text[], most_common_elem_freqs FROM pg_stats"
        " WHERE tablename = %s AND attname = 'fts'", (fts_table,)).fetchone()
    freqs = dict(zip(row[0], row[1])) if row and row[0] else {}
    _STATS[key] = (time.monotonic(), freqs)
    return freqs


def _refine_common(conn, fts_table: str, df: dict[str, float], docs: int) -> None:
    """Counts that hit DF_CAP take ANALYZE's frequency for the lexeme when it has one."""
    capped = [lex for lex, n in df.items() if n >= DF_CAP]
    if capped:
        common = _common_frequencies(conn, fts_table)
        for lex in capped:
            if lex in common:
                df[lex] = max(float(DF_CAP), common[lex] * docs)


def _score(conn, fts_table: str, tsquery: str, idf: dict[str, float], avgdl: float,
           depth: int | None) -> list[tuple[int, float]]:
    limit = f"LIMIT {int(depth)}" if depth else ""
    rows = conn.raw.execute(
        f"""
WITH q AS (SELECT * FROM unnest(%s::text[], %s::float8[]) AS q(lexeme, idf)),
hits AS (SELECT f.rid, f.fts, f.len / %s::float8 AS rel FROM {fts_table} f WHERE f.fts @@ %s::tsquery)
SELECT h.rid, SUM(q.idf * t.tf * {K1 + 1} / (t.tf + {K1} * ({1 - B} + {B} * h.rel))) AS score
FROM hits h CROSS JOIN LATERAL unnest(h.fts) u JOIN q ON q.lexeme = u.lexeme
CROSS JOIN LATERAL (SELECT COALESCE(array_length(u.positions, 1), 1)::float8 AS tf) t
GROUP BY h.rid ORDER BY score DESC, h.rid {limit}""",
        (list(idf), list(idf.values()), avgdl, tsquery),
    ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in np.asarray(vector, dtype=np.float32).reshape(-1)) + "]"


def ensure_hnsw(conn, dims: int) -> None:
    """The HNSW index over `dims`-dimensional vectors (created once per database)."""
    key = (conn.server, dims)
    if key in _HNSW_READY:
        return
    conn.raw.execute(
        f"CREATE INDEX IF NOT EXISTS idx_embeddings_hnsw_{dims} ON embeddings"
        f" USING hnsw ((vec::vector({dims})) vector_cosine_ops) WHERE dims = {dims}"
    )
    _HNSW_READY.add(key)


def _set_ef_search(conn, k: int) -> None:
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


def knn(conn, vector: np.ndarray, model: str, k: int) -> list[tuple[str, float]]:
    """(content_hash, cosine similarity) of the k nearest `model` vectors, best first."""
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    if k <= 0:
        return []
    _set_ef_search(conn, k)
    literal = vector_literal(query)
    rows = conn.execute(f"SELECT content_hash, 1 - dist FROM ({_nearest_sql(int(query.shape[0]))}) k ORDER BY dist",
                        (literal, model, literal, k)).fetchall()
    return [(r[0], float(r[1])) for r in rows]


def vector_search(conn, vector: np.ndarray, model: str, where: str, params: list, limit: int,
                  depth: int) -> tuple[list[tuple[str, float]], int]:
    """(memory_id, cosine similarity) of the memories passing `where` (SQLite-dialect conditions on
    `m`, from `store.memories.filter_sql`) among the `depth` nearest vectors, best first, at most
    `limit`; and how many vectors the scan found (fewer than depth: there are no more). One
    statement: KNN, the filter join and the order."""
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    _set_ef_search(conn, depth)
    literal = vector_literal(query)
    rows = conn.execute(
        f"WITH k AS MATERIALIZED ({_nearest_sql(int(query.shape[0]))})"
        " SELECT m.id, 1 - k.dist, (SELECT count(*) FROM k) FROM k JOIN memories m ON m.content_hash = k.content_hash"
        f" WHERE {where} ORDER BY k.dist, m.id LIMIT ?",
        (literal, model, literal, depth, *params, limit),
    ).fetchall()
    found = int(rows[0][2]) if rows else depth  # none passed: unknown, as if the scan were full
    return [(r[0], float(r[1])) for r in rows], found


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
