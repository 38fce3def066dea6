"""Recall: query → candidates (legs) → weighted RRF → post-fusion stages → filter → diversity.

Pure orchestration over the legs and stages of retrieval.catalogue; the store does the SQL.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np

from kenning.core.telemetry import record_error
from kenning.core.types import HitView, Memory, MemoryFilter
from kenning.providers.embedding import EmbeddingProvider
from kenning.retrieval.match import match_of
from kenning.retrieval.catalogue import LEGS, STAGES
from kenning.retrieval.config import Leg, RecallConfig
from kenning.retrieval.diversity import Packable, diversity_select
from kenning.retrieval.fusion import FusedHit, weighted_rrf
from kenning.retrieval.legs import RecallContext
from kenning.retrieval.query_type import detect_query_type
from kenning.store.backend import Connection
from kenning.store.memories import get_memories
from kenning.store.vectors import get_embeddings

# the vector legs of concurrent recalls (threads start on demand; each keeps its own reader)
_LEG_THREADS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="kenning-recall-leg")


@dataclass
class RecallHit:
    memory: Memory
    score: float
    legs: dict[str, dict[str, float]] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # memories collapsed into this one (derived_from)

    def to_dict(self) -> HitView:
        m = self.memory
        return {
            "id": m.id, "content": m.content, "score": round(self.score, 6), "type": m.type,
            "project": m.project, "tags": m.tags, "created_at": m.created_at,
            "importance": m.importance, "pinned": m.pinned, "superseded_by": m.superseded_by,
            "legs": self.legs, "reasons": self.reasons, "sources": self.sources, "match": match_of(self.legs),
        }


class Recalled(list[RecallHit]):
    """recall's answer: the hits, best first (a plain list to every caller), and `bm25_matches`,
    what the BM25 leg found in memory content — [(memory_id, bm25 score)] best first, hint matches
    not merged in; None when the leg did not run. The prompt hook tracks these FTS matches
    without a second query."""

    def __init__(self, hits: list[RecallHit], bm25_matches: list[tuple[str, float]] | None = None) -> None:
        super().__init__(hits)
        self.bm25_matches = bm25_matches


def run_legs(ctx: RecallContext) -> dict[str, list[tuple[str, float]]]:
    """Each configured leg's candidates, by leg name (plain strings: what RecallHit.legs shows).

    With `ctx.reader`, the vector leg runs on a pool thread with that thread's own reader while the
    other legs run here: its work (the query's embedding, the scan of every vector) and the BM25
    leg's FTS5 scoring both release the GIL, so on two cores a recall waits for the longer leg rather
    than the sum (issue 36: at 100k memories BM25 ~15 ms, vector ~7 ms, on one core each). On
    PostgreSQL both legs wait on the server, each on its own connection (at 1M: vector ~45 ms,
    BM25 ~13 ms); a pool thread holds one more connection."""
    legs = ctx.config.legs
    if ctx.reader is None or Leg.VECTOR not in legs or len(legs) == 1:
        return {leg.value: LEGS[leg](ctx) for leg in legs}
    pending = _LEG_THREADS.submit(_vector_leg_on_own_reader, ctx, ctx.reader)
    ranked = {leg.value: LEGS[leg](ctx) for leg in legs if leg is not Leg.VECTOR}
    ranked[Leg.VECTOR.value], ctx._query_vector = pending.result()
    return {leg.value: ranked[leg.value] for leg in legs}  # the config's order, as sequentially


def _vector_leg_on_own_reader(ctx: RecallContext, reader: Callable[[], Connection]
                              ) -> tuple[list[tuple[str, float]], np.ndarray | None]:
    """The vector leg on a copy of `ctx` holding this thread's reader; its hits and the query vector
    it embedded (for the stages that use it)."""
    twin = replace(ctx, conn=reader(), reader=None)
    return LEGS[Leg.VECTOR](twin), twin._query_vector


def fuse(ctx: RecallContext, ranked: dict[str, list[tuple[str, float]]]) -> list[FusedHit]:
    weights = {leg.value: w for leg, w in ctx.config.weights.get(ctx.query_type, {}).items()}
    for name in ranked:  # a single leg or a leg without a weight still counts
        weights.setdefault(name, 1.0 if len(ranked) == 1 else 0.25)
    return weighted_rrf(ranked, weights, ctx.config.rrf_k)


def run_stages(ctx: RecallContext, hits: list[FusedHit]) -> list[FusedHit]:
    for name in ctx.config.stages:
        try:
            hits = STAGES[name](ctx, hits)
        except Exception as exc:  # a stage is an optional refinement: keep the fused order
            record_error("retrieval", f"stage {name} failed: {exc}", stage_name=name.value)
    return hits


def recall(
    conn: Connection, embedder: EmbeddingProvider, query: str, *, limit: int = 10,
    filters: MemoryFilter | None = None, config: RecallConfig | None = None, budget_chars: int | None = None,
    recent_tool_calls: list[str] | None = None, reader: Callable[[], Connection] | None = None,
) -> Recalled:
    """`reader`: the database's per-thread reader (`conn` is the calling thread's): the vector leg
    then runs beside the others (run_legs)."""
    ctx = RecallContext(conn, query, filters or MemoryFilter(), config or RecallConfig(), embedder,
                        query_type=detect_query_type(query, recent_tool_calls), reader=reader)
    hits = run_stages(ctx, fuse(ctx, run_legs(ctx)))
    pool = hits[: max(limit * 5, 50)] if (ctx.config.diversity or budget_chars) else hits[:limit]
    memories = get_memories(conn, [h.memory_id for h in pool])
    viewer = ctx.filters.viewer  # legs honour it already; this also covers what a stage brought in
    pool = [h for h in pool if h.memory_id in memories and (viewer is None or viewer.can_see(memories[h.memory_id]))]
    if not (ctx.config.diversity or budget_chars):
        return Recalled([RecallHit(memories[h.memory_id], h.score, h.legs, h.reasons, h.sources) for h in pool[:limit]],
                        ctx.bm25_matches)
    vectors = get_embeddings(conn, list({memories[h.memory_id].content_hash for h in pool}), embedder.model_id)
    items = [
        Packable(h.memory_id, h.score, len(memories[h.memory_id].content),
                 vectors.get(memories[h.memory_id].content_hash))
        for h in pool
    ]
    by_id = {h.memory_id: h for h in pool}
    chosen = diversity_select(items, limit=limit, budget_chars=budget_chars, **ctx.config.topic_diversity.model_dump())
    return Recalled([
        RecallHit(memories[item.memory_id], adjusted, by_id[item.memory_id].legs, by_id[item.memory_id].reasons,
                  by_id[item.memory_id].sources)
        for item, adjusted in chosen
    ], ctx.bm25_matches)
