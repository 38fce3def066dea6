"""The recall context (and the graph lookup its legs share), the leg and stage signatures, and the two
base legs (BM25, vector).

A leg is `fn(ctx) -> [(memory_id, leg_score)]` best first. A stage is
`fn(ctx, hits) -> hits` run after fusion. Both are named in retrieval.catalogue, so configs
can switch them by name.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from kenning.core.types import MemoryFilter
from kenning.providers.embedding import EmbeddingProvider
from kenning.retrieval.config import QueryType, RecallConfig
from kenning.retrieval.fusion import FusedHit
from kenning.retrieval.hints import with_hints
from kenning.store.backend import Connection
from kenning.store.search import bm25_search, vector_search


@dataclass
class GraphLookup:
    """Result of one graph traversal (retrieval.graph_leg): memory scores (best first) and how it went."""

    scores: dict[str, float] = field(default_factory=dict)
    entities: list[str] = field(default_factory=list)
    neighbors: list[str] = field(default_factory=list)
    timed_out: bool = False
    error: str | None = None

    def ranked(self) -> list[tuple[str, float]]:
        return sorted(self.scores.items(), key=lambda kv: (-kv[1], kv[0]))


@dataclass
class RecallContext:
    """One recall's inputs, and what its legs share while it runs."""

    conn: Connection
    query: str
    filters: MemoryFilter
    config: RecallConfig
    embedder: EmbeddingProvider
    query_type: QueryType = QueryType.SEMANTIC
    # this thread's reader (Database.reader): given, recall.run_legs runs the vector leg on a pool thread
    reader: Callable[[], Connection] | None = None
    started: float = field(default_factory=time.perf_counter)
    _query_vector: np.ndarray | None = None
    graph_lookup: GraphLookup | None = None  # the one graph traversal, shared by the graph leg and graph_boost
    # what the BM25 leg found in memory content (before hint matches merge in): [(memory_id, score)] best first
    bm25_matches: list[tuple[str, float]] | None = None

    @property
    def query_vector(self) -> np.ndarray:
        if self._query_vector is None:
            self._query_vector = self.embedder.embed_query(self.query)
        return self._query_vector

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000.0


LegFn = Callable[[RecallContext], list[tuple[str, float]]]
StageFn = Callable[[RecallContext, list[FusedHit]], list[FusedHit]]


def bm25_leg(ctx: RecallContext) -> list[tuple[str, float]]:
    hits = ctx.bm25_matches = bm25_search(ctx.conn, ctx.query, ctx.filters, ctx.config.leg_limit, ctx.reader)
    return with_hints(ctx.conn, ctx.query, ctx.filters, hits, ctx.config.leg_limit) if ctx.config.extras.hints else hits


def vector_leg(ctx: RecallContext) -> list[tuple[str, float]]:
    return vector_search(ctx.conn, ctx.query_vector, ctx.embedder.model_id, ctx.filters, ctx.config.leg_limit)
