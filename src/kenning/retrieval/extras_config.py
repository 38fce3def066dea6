"""Knobs of the retrieval extras (graph boost, dampening, rerank, hints, session context), one field of RecallConfig.

The stages' own parameters live here too (retrieval.dampening and retrieval.session_context import
them), so the config imports no stage: a stage takes the RecallContext, whose config is this."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class DampeningParams:
    """Defaults from the v2 configuration reference (pipeline.dampening)."""

    gravity_enabled: bool = True
    hub_enabled: bool = True
    resolution_enabled: bool = True
    hub_percentile: float = 0.9
    hub_penalty: float = 0.7
    gravity_penalty: float = 0.5
    resolution_boost: float = 1.2


@dataclass(frozen=True)
class SessionContextParams:
    weight: float = 0.4
    window: int = 3
    decay: float = 0.7
    top: int = 100


@dataclass(frozen=True)
class ExtrasConfig:
    hints: bool = False  # merge memory_hints_fts matches into the BM25 leg by max
    graph_boost_weight: float = 0.15
    dampening: DampeningParams = field(default_factory=DampeningParams)
    rerank_top_n: int = 20
    rerank_timeout_ms: float = 2000.0
    session_context: SessionContextParams = field(default_factory=SessionContextParams)
