"""RecallConfig: retrieval configured as data, with named presets to benchmark against each other."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from kenning.retrieval.extras_config import ExtrasConfig

# Weighted RRF weights per query type (memory-system-v5 "Reciprocal Rank Fusion").
DEFAULT_WEIGHTS: dict[str, dict[str, float]] = {
    "identifier": {"bm25": 0.5, "graph": 0.3, "vector": 0.2},
    # bm25 = vector (graph keeps its 0.25 share): LoCoMo protocol A R@10 64.5 vs 55.5 for 0.5/0.25 at k=60.
    "semantic": {"vector": 0.375, "bm25": 0.375, "graph": 0.25},
    "structural": {"graph": 0.6, "bm25": 0.25, "vector": 0.15},
}


@dataclass(frozen=True)
class RecallConfig:
    legs: tuple[str, ...] = ("bm25", "vector")
    leg_limit: int = 100  # candidates fetched per leg
    rrf_k: int = 5  # small k trusts each leg's top ranks; LoCoMo R@10 flat for k in 3..10, falls from k=20 on
    weights: dict[str, dict[str, float]] = field(default_factory=lambda: DEFAULT_WEIGHTS)
    stages: tuple[str, ...] = ()  # post-fusion stages by name, run in order (graph_boost, dampening, rerank)
    diversity: bool = False
    diversity_threshold: float = 0.85
    diversity_decay: float = 0.5
    diversity_floor: float = 0.1
    stage_timeout_ms: float = 150.0
    graph_deadline_ms: float = 50.0
    extras: ExtrasConfig = field(default_factory=ExtrasConfig)  # graph boost, dampening, rerank, hints knobs

    def with_(self, **changes) -> "RecallConfig":
        return replace(self, **changes)


_HYBRID = ("bm25", "vector")

# Every preset, by name (legs and stages are named in retrieval.catalogue).
PRESETS: Mapping[str, RecallConfig] = MappingProxyType({
    "bm25": RecallConfig(legs=("bm25",)),
    "dense": RecallConfig(legs=("vector",)),
    "hybrid": RecallConfig(legs=_HYBRID),
    # provenance: a derived memory and its sources in one slot, amended rules first (issue 10)
    "default": RecallConfig(legs=_HYBRID, stages=("session_context", "provenance")),
    "graph": RecallConfig(legs=_HYBRID + ("graph",), stages=("graph_boost",)),
    "graph_boost": RecallConfig(legs=_HYBRID, stages=("graph_boost",)),
    "dampening": RecallConfig(legs=_HYBRID, stages=("dampening",)),
    "rerank": RecallConfig(legs=_HYBRID, stages=("rerank",)),
    "hints": RecallConfig(legs=_HYBRID, extras=ExtrasConfig(hints=True)),
    "context": RecallConfig(legs=_HYBRID, stages=("session_context",)),
    "code": RecallConfig(legs=_HYBRID, stages=("session_context", "code_neighbourhood")),  # issue 15
    "full": RecallConfig(
        legs=_HYBRID + ("graph",), stages=("session_context", "graph_boost", "dampening", "rerank"),
        extras=ExtrasConfig(hints=True),
    ),
})


def preset(name: str) -> RecallConfig:
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown recall preset {name!r}; choose from {', '.join(PRESETS)}") from None
