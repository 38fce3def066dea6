"""Prospective hints in recall (memory-pipeline-v2 "Prospective Indexing").

The BM25 leg also searches memory_hints_fts; a memory matched through a hint gets
max(content score, hint score) — a hint lifts its parent memory but never stacks on top of
a content match. Scores on both sides are FTS5 bm25 negated (higher is better).
"""

from __future__ import annotations

from kenning.core.telemetry import record_error
from kenning.core.types import MemoryFilter
from kenning.store.backend import Connection
from kenning.store.hints import search_hints
from kenning.store.search import fts_query


def merge_by_max(content_hits: list[tuple[str, float]], hint_hits: list[tuple[str, float]],
                 limit: int) -> list[tuple[str, float]]:
    """Union of both lists; a memory in both keeps the larger score. Best first."""
    merged = dict(content_hits)
    for memory_id, score in hint_hits:
        merged[memory_id] = max(score, merged.get(memory_id, float("-inf")))
    return sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]


def with_hints(conn: Connection, query: str, filters: MemoryFilter, content_hits: list[tuple[str, float]],
               limit: int) -> list[tuple[str, float]]:
    """`content_hits` merged with hint matches for `query` (fail-open: errors keep the content hits)."""
    match = fts_query(query)
    if not match:
        return content_hits
    try:
        hint_hits = [(mid, -score) for mid, score in search_hints(conn, match, limit=limit, filters=filters)]
    except Exception as exc:  # hints are an optional extra signal
        record_error("retrieval", f"hint search failed: {exc}")
        return content_hits
    return merge_by_max(content_hits, hint_hits, limit) if hint_hits else content_hits
