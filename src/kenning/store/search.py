"""Candidate queries for recall: BM25 over memories_fts and vector KNN, both honouring filters."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from kenning.core.types import MemoryFilter
from kenning.store.backend import Connection, is_postgres
from kenning.store.memories import filter_sql
from kenning.store.vectors import knn
from kenning.core.text import STOP_WORDS  # dropped from OR queries: keeps the BM25 leg sharp

_IN_CHUNK = 900  # keys per IN (...) lookup, well under SQLite's variable limit
_FTS_TOKEN = re.compile(r"[^\W_]+|_", re.UNICODE)


def fts_tokens(text: str, *, drop_stop_words: bool = True) -> list[str]:
    """The query's distinct lowercase word tokens (at most 64), stop words dropped unless that
    leaves none."""
    tokens = [t.lower() for t in _FTS_TOKEN.findall(text) if t != "_"]
    kept = [t for t in tokens if not (drop_stop_words and t in STOP_WORDS)] or tokens
    return list(dict.fromkeys(kept))[:64]


def fts_query(text: str, *, drop_stop_words: bool = True) -> str:
    """An FTS5 MATCH expression: OR of quoted tokens (no syntax from the user reaches FTS5)."""
    return " OR ".join(f'"{t}"' for t in fts_tokens(text, drop_stop_words=drop_stop_words))


def bm25_search(
    conn: Connection, query: str, filters: MemoryFilter | None = None, limit: int = 100
) -> list[tuple[str, float]]:
    """(memory_id, bm25 score — higher is better), best first.

    Ranks in FTS5 alone and applies the filters to the top rows only: joining every match
    to `memories` before sorting doubled the cost at 100k memories. Like vector_search it
    deepens once, then runs the filtered join when a selective filter leaves too few.
    """
    match = fts_query(query)
    if not match:
        return []
    where, params = filter_sql(filters)
    fetch = max(limit * 4, 200)
    if is_postgres(conn):
        from kenning.store.pg import search as pg

        tokens = fts_tokens(query)
        for depth in (fetch, fetch * 8, None):  # one statement per depth: ranking and filter
            ranked, found = pg.bm25_search(conn, tokens, where, params, limit, depth)
            if len(ranked) >= limit or depth is None or found < depth:
                return ranked
    for depth in (fetch, fetch * 8):
        hits = [(r[0], -float(r[1])) for r in conn.execute(
            "SELECT rowid, bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ?"
            " ORDER BY bm25(memories_fts) LIMIT ?", (match, depth),
        )]
        ranked = _filtered(conn, "rid", hits, where, params, limit)
        if len(ranked) >= limit or len(hits) < depth:
            return ranked
    rows = conn.execute(
        "SELECT m.id, -bm25(memories_fts) AS score FROM memories_fts"
        " JOIN memories m ON m.rid = memories_fts.rowid"
        f" WHERE memories_fts MATCH ? AND {where} ORDER BY bm25(memories_fts) LIMIT ?",
        [match, *params, limit],
    ).fetchall()
    return [(r[0], float(r[1])) for r in rows]


def vector_search(
    conn: Connection, vector: np.ndarray, model: str, filters: MemoryFilter | None = None, limit: int = 100
) -> list[tuple[str, float]]:
    """(memory_id, cosine similarity), best first.

    KNN over-fetches and then applies the filters, deepening once (8x) when they leave too
    few hits; a filter that selective leaves few memories, so an exact scan of just their
    vectors finishes the job and no match is lost.
    """
    where, params = filter_sql(filters)
    fetch = max(limit * 4, 200)
    if is_postgres(conn):  # one statement per depth: KNN joined to the filter
        from kenning.store.pg import search as pg

        for depth in (fetch, fetch * 8):
            ranked, found = pg.vector_search(conn, vector, model, where, params, limit, depth)
            if len(ranked) >= limit or found < depth:
                return ranked
        return _exact_scan(conn, vector, model, where, params, limit)
    for depth in (fetch, fetch * 8):
        hits = knn(conn, vector, model, depth)
        ranked = _filtered(conn, "content_hash", hits, where, params, limit)
        if len(ranked) >= limit or len(hits) < depth:
            return ranked
    return _exact_scan(conn, vector, model, where, params, limit)


def _filtered(conn: Connection, column: str, hits: Sequence[tuple[int | str, float]], where: str,
              params: Sequence[object], limit: int) -> list[tuple[str, float]]:
    """(memory_id, score) of the memories passing the filters whose `column` (rid or
    content_hash) has a hit, best score first."""
    score = dict(hits)
    keys = list(score)
    position = {key: i for i, key in enumerate(keys)}  # hits come best first
    rows = []
    for start in range(0, len(keys), _IN_CHUNK):
        chunk = keys[start:start + _IN_CHUNK]
        rows += conn.execute(
            f"SELECT m.id, m.{column} FROM memories m"
            f" WHERE m.{column} IN ({','.join('?' * len(chunk))}) AND {where}",
            [*chunk, *params],
        ).fetchall()
    rows.sort(key=lambda r: position[r[1]])
    return [(r[0], score[r[1]]) for r in rows[:limit]]


def _exact_scan(conn: Connection, vector: np.ndarray, model: str, where: str, params: Sequence[object],
                limit: int) -> list[tuple[str, float]]:
    rows = conn.execute(
        "SELECT m.id, e.vector FROM memories m JOIN embeddings e"
        f" ON e.content_hash = m.content_hash AND e.model = ? WHERE {where}",
        [model, *params],
    ).fetchall()
    if not rows:
        return []
    matrix = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
    query = np.asarray(vector, dtype=np.float32)
    sims = matrix @ query / (np.linalg.norm(matrix, axis=1) * np.linalg.norm(query) + 1e-9)
    order = np.argsort(-sims)[:limit]
    return [(rows[i][0], float(sims[i])) for i in order]
