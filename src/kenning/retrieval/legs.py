"""The recall context, the leg and stage signatures, and the two base legs (BM25, vector).

A leg is `fn(ctx) -> [(memory_id, leg_score)]` best first. A stage is
`fn(ctx, hits) -> hits` run after fusion. Both are named in retrieval.catalogue, so configs
can switch them by name.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kenning.core.types import MemoryFilter
from kenning.retrieval.config import RecallConfig
from kenning.retrieval.hints import with_hints
from kenning.store.search import bm25_search, vector_search


@dataclass
class RecallContext:
    conn: Any
    query: str
    filters: MemoryFilter
    config: RecallConfig
    embedder: Any  # EmbeddingProvider
    query_type: str = "semantic"
    started: float = field(default_factory=time.perf_counter)
    _query_vector: np.ndarray | None = None

    @property
    def query_vector(self) -> np.ndarray:
        if self._query_vector is None:
            self._query_vector = self.embedder.embed_query(self.query)
        return self._query_vector

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000.0


LegFn = Callable[[RecallContext], list[tuple[str, float]]]
StageFn = Callable[[RecallContext, list], list]
def bm25_leg(ctx: RecallContext) -> list[tuple[str, float]]:
    hits = bm25_search(ctx.conn, ctx.query, ctx.filters, ctx.config.leg_limit)
    return with_hints(ctx.conn, ctx.query, ctx.filters, hits, ctx.config.leg_limit) if ctx.config.extras.hints else hits


def vector_leg(ctx: RecallContext) -> list[tuple[str, float]]:
    return vector_search(ctx.conn, ctx.query_vector, ctx.embedder.model_id, ctx.filters, ctx.config.leg_limit)
