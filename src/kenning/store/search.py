"""Candidate queries for recall: BM25 over memories_fts and vector KNN, both honouring filters."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from kenning.core.types import MemoryFilter
from kenning.store.backend import Connection, is_postgres
from kenning.store.memories import filter_sql
from kenning.store.vectors import knn
from kenning.core.text import STOP_WORDS  # dropped from OR queries: keeps the BM25 leg sharp

_IN_CHUNK = 900  # keys per IN (...) lookup, well under SQLite's variable limit
SPLIT_FROM = 20_000  # memories (by rowid) above which BM25 ranks in two halves at once, given a reader
# the upper halves of concurrent recalls' BM25 rankings (threads start on demand; each keeps its reader)
_FTS_THREADS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="kenning-fts-half")
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
    conn: Connection, query: str, filters: MemoryFilter | None = None, limit: int = 100,
    reader: Callable[[], Connection] | None = None, split_from: int = SPLIT_FROM,
) -> list[tuple[str, float]]:
    """(memory_id, bm25 score — higher is better), best first.

    Ranks in FTS5 alone and applies the filters to the top rows only: joining every match
    to `memories` before sorting doubled the cost at 100k memories. Like vector_search it
    deepens once, then runs the filtered join when a selective filter leaves too few.
    `reader` (a database's per-thread reader; SQLite): a store of more than `split_from` memories
    is ranked in two halves at once (_fts_ranked).
    """
    match = fts_query(query)
    if not match:
        return []
    where, params = filter_sql(filters)
    fetch = max(limit * 4, 200)
    if is_postgres(conn):
        from kenning.store.pg import search as pg
        from kenning.store.pg.narrow import as_pg

        tokens = fts_tokens(query)
        # one statement per depth: ranking and filter. The ranking costs the same at either depth
        # (its sums, then a top-N sort) and the join stops at `limit` rows that pass, so it starts
        # deep: a filter passing 1 in 20 (a project of a team server) is answered by it. A filter
        # that leaves too few gets a window 8x as wide, then the exact ranking of its own memories
        # (few matches in all: every statement is cheap).
        for window in (pg.POSTINGS_WINDOW, pg.POSTINGS_WINDOW * 8):
            ranked, _ = pg.bm25_search(as_pg(conn), tokens, where, params, limit, fetch * 8, window)
            if len(ranked) >= limit:
                return ranked
        return pg.bm25_filtered(as_pg(conn), tokens, where, params, limit)
    split = _split_rowid(conn, split_from) if reader is not None else None
    for depth in (fetch, fetch * 8):
        hits = _fts_ranked(conn, match, depth, reader, split)
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


def _split_rowid(conn: Connection, split_from: int) -> int | None:
    """The middle rowid of a store with more than `split_from` memories (rowids grow one by one), else None."""
    top = conn.execute("SELECT MAX(rid) FROM memories").fetchone()[0]
    return int(top) // 2 if top is not None and top > split_from else None


def _fts_ranked(conn: Connection, match: str, depth: int, reader: Callable[[], Connection] | None,
                split: int | None) -> list[tuple[int, float]]:
    """(rowid, bm25 score) of the `depth` best matches, best first.

    FTS5's cost is scoring every matching row (~0.8 µs each: ~15 ms for a query whose words are in
    20k of 100k memories), and one statement runs on one core. Given a `split` rowid, the rows below
    it are ranked here and the others at once on a pool thread with its own reader; each half's best
    `depth` merged are the whole's (bm25's statistics are the table's either way: same scores)."""
    if reader is None or split is None:
        return _fts_rows(conn, match, depth)
    upper = _FTS_THREADS.submit(lambda: _fts_rows(reader(), match, depth, " AND rowid >= ?", split))
    lower = _fts_rows(conn, match, depth, " AND rowid < ?", split)
    return sorted(lower + upper.result(), key=lambda h: -h[1])[:depth]


def _fts_rows(conn: Connection, match: str, depth: int, rowids: str = "", *bound: int) -> list[tuple[int, float]]:
    return [(r[0], -float(r[1])) for r in conn.execute(
        f"SELECT rowid, bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ?{rowids}"
        " ORDER BY bm25(memories_fts) LIMIT ?", (match, *bound, depth))]


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
    if is_postgres(conn):  # one statement: the HNSW scan feeds the filter until `limit` pass
        from kenning.store.pg import search as pg
        from kenning.store.pg.narrow import as_pg

        ranked = pg.vector_search(as_pg(conn), vector, model, where, params, limit)
        return ranked if len(ranked) >= limit else _exact_scan(conn, vector, model, where, params, limit)
    for depth in (fetch, fetch * 8):
        hits = knn(conn, vector, model, depth)
        ranked = _filtered(conn, "content_hash", hits, where, params, limit)
        if len(ranked) >= limit or len(hits) < depth:
            return ranked
    return _exact_scan(conn, vector, model, where, params, limit)


def _filtered(conn: Connection, column: str, hits: Sequence[tuple[int | str, float]], where: str,
              params: Sequence[object], limit: int) -> list[tuple[str, float]]:
    """(memory_id, score) of the memories passing the filters whose `column` (rid or
    content_hash) has a hit, best score first.

    The hits come best first, so they are looked up in order, a chunk at a time, and the lookups
    stop once `limit` passed: the first chunk is twice `limit` (an unselective filter is answered
    by it, half the lookups of the whole over-fetch: issue 36), the rest _IN_CHUNK at a time."""
    score = dict(hits)
    keys = list(score)
    position = {key: i for i, key in enumerate(keys)}  # hits come best first
    rows: list[tuple[str, int | str]] = []
    start = 0
    while start < len(keys) and len(rows) < limit:
        size = min(max(2 * limit, 64), _IN_CHUNK) if start == 0 else _IN_CHUNK
        chunk = keys[start:start + size]
        start += size
        found = conn.execute(
            f"SELECT m.id, m.{column} FROM memories m"
            f" WHERE m.{column} IN ({','.join('?' * len(chunk))}) AND {where}",
            [*chunk, *params],
        ).fetchall()
        rows += sorted(((r[0], r[1]) for r in found), key=lambda r: position[r[1]])
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
