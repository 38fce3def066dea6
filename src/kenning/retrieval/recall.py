"""Recall: query → candidates (legs) → weighted RRF → post-fusion stages → filter → diversity.

Pure orchestration over the legs and stages of retrieval.catalogue; the store does the SQL.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from kenning.core.telemetry import record_error
from kenning.core.types import HitView, Memory, MemoryFilter
from kenning.providers.embedding import EmbeddingProvider
from kenning.retrieval.match import match_of
from kenning.retrieval.catalogue import LEGS, STAGES
from kenning.retrieval.config import RecallConfig
from kenning.retrieval.diversity import Packable, diversity_select
from kenning.retrieval.fusion import FusedHit, weighted_rrf
from kenning.retrieval.legs import RecallContext
from kenning.retrieval.query_type import detect_query_type
from kenning.store.backend import Connection
from kenning.store.memories import get_memories
from kenning.store.vectors import get_embeddings


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
    """Each configured leg's candidates, by leg name (plain strings: what RecallHit.legs shows)."""
    return {leg.value: LEGS[leg](ctx) for leg in ctx.config.legs}


def fuse(ctx: RecallContext, ranked: dict[str, list[tuple[str, float]]]) -> list[FusedHit]:
    weights = dict(ctx.config.weights.get(ctx.query_type, {}))
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
    recent_tool_calls: list[str] | None = None,
) -> Recalled:
    ctx = RecallContext(conn, query, filters or MemoryFilter(), config or RecallConfig(), embedder,
                        query_type=detect_query_type(query, recent_tool_calls))
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
