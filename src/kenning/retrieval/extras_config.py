"""Knobs of the retrieval extras (graph boost, dampening, rerank, hints, session context), one field of RecallConfig."""

from __future__ import annotations

from dataclasses import dataclass, field

from kenning.retrieval.dampening import DampeningParams
from kenning.retrieval.session_context import SessionContextParams


@dataclass(frozen=True)
class ExtrasConfig:
    hints: bool = False  # merge memory_hints_fts matches into the BM25 leg by max
    graph_boost_weight: float = 0.15
    dampening: DampeningParams = field(default_factory=DampeningParams)
    rerank_top_n: int = 20
    rerank_timeout_ms: float = 2000.0
    session_context: SessionContextParams = field(default_factory=SessionContextParams)
