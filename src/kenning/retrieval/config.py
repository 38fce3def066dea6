"""RecallConfig: retrieval configured as data, with named presets to benchmark against each other.

Legs, stages, query types and presets are `StrEnum`s inside a pydantic model (the pattern of
graphiti's search_config), so a misspelt name fails when the config is built, naming the allowed
values, never as a KeyError in the middle of a request. `effective_config` is the one place where
the settings, a preset and a caller's overrides merge (docs/recall.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from enum import StrEnum
from types import MappingProxyType
from typing import TypedDict

from pydantic import BaseModel, ConfigDict, Field

from kenning.core.config import Settings, TopicDiversity
from kenning.core.errors import InvalidInput
from kenning.retrieval.extras_config import ExtrasConfig


class Leg(StrEnum):
    """Candidate legs (retrieval.catalogue.LEGS)."""

    BM25 = "bm25"
    VECTOR = "vector"
    GRAPH = "graph"


class Stage(StrEnum):
    """Post-fusion stages, run in the order a config names them (retrieval.catalogue.STAGES)."""

    GRAPH_BOOST = "graph_boost"
    DAMPENING = "dampening"
    RERANK = "rerank"
    SESSION_CONTEXT = "session_context"
    CODE_NEIGHBOURHOOD = "code_neighbourhood"
    PROVENANCE = "provenance"


class QueryType(StrEnum):
    """What retrieval.query_type detects; picks the fusion weights."""

    IDENTIFIER = "identifier"
    SEMANTIC = "semantic"
    STRUCTURAL = "structural"


class Preset(StrEnum):
    BM25 = "bm25"
    DENSE = "dense"
    HYBRID = "hybrid"
    DEFAULT = "default"
    GRAPH = "graph"
    GRAPH_BOOST = "graph_boost"
    DAMPENING = "dampening"
    RERANK = "rerank"
    HINTS = "hints"
    CONTEXT = "context"
    CODE = "code"
    FULL = "full"


# Weighted RRF weights per query type (memory-system-v5 "Reciprocal Rank Fusion").
DEFAULT_WEIGHTS: Mapping[QueryType, Mapping[Leg, float]] = MappingProxyType({
    QueryType.IDENTIFIER: {Leg.BM25: 0.5, Leg.GRAPH: 0.3, Leg.VECTOR: 0.2},
    # bm25 = vector (graph keeps its 0.25 share): LoCoMo protocol A R@10 64.5 vs 55.5 for 0.5/0.25 at k=60.
    QueryType.SEMANTIC: {Leg.VECTOR: 0.375, Leg.BM25: 0.375, Leg.GRAPH: 0.25},
    QueryType.STRUCTURAL: {Leg.GRAPH: 0.6, Leg.BM25: 0.25, Leg.VECTOR: 0.15},
})


class ConfigExplained(TypedDict):
    """What a recall runs, in plain values (`kenning recall --explain`)."""

    preset: str | None
    legs: list[str]
    stages: list[str]
    rrf_k: int
    candidate_pool: int
    diversity: bool
    topic_diversity: dict[str, float]
    hints: bool


class RecallConfig(BaseModel):
    """How one recall runs. Built once per request (or per preset); immutable."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    legs: tuple[Leg, ...] = (Leg.BM25, Leg.VECTOR)
    leg_limit: int = Field(100, ge=1, description="Candidates fetched per leg (settings: recall.candidate_pool).")
    rrf_k: int = Field(5, ge=1, description="RRF constant; small k trusts each leg's top ranks (recall.rrf_k).")
    weights: dict[QueryType, dict[Leg, float]] = Field(default_factory=lambda: {q: dict(w) for q, w in DEFAULT_WEIGHTS.items()})
    stages: tuple[Stage, ...] = ()  # post-fusion stages by name, run in order
    diversity: bool = False  # topic diversity over the results (always when a recall has a character budget)
    topic_diversity: TopicDiversity = Field(default_factory=TopicDiversity)  # recall.topic_diversity
    graph_deadline_ms: float = 50.0
    extras: ExtrasConfig = Field(default_factory=ExtrasConfig)  # graph boost, dampening, rerank, hints knobs
    preset: Preset | None = None  # the preset it was built from (effective_config); None: built by hand

    def with_(self, **changes: object) -> RecallConfig:
        """A copy with `changes` (any values: pydantic validates them like a new config's, so a bad name
        fails here)."""
        return type(self).model_validate({**{k: getattr(self, k) for k in self.model_fields_set}, **changes})

    def explain(self) -> ConfigExplained:
        """What runs, in plain values (`kenning recall --explain`)."""
        return {
            "preset": self.preset.value if self.preset else None, "legs": [str(x) for x in self.legs],
            "stages": [str(x) for x in self.stages], "rrf_k": self.rrf_k, "candidate_pool": self.leg_limit,
            "diversity": self.diversity, "topic_diversity": self.topic_diversity.model_dump(),
            "hints": self.extras.hints,
        }


_HYBRID = (Leg.BM25, Leg.VECTOR)

# Every preset, by name. A preset names what runs (legs, stages, extras); a field its definition
# sets itself also wins over the settings in effective_config (none of these sets rrf_k or leg_limit).
PRESETS: Mapping[Preset, RecallConfig] = MappingProxyType({
    Preset.BM25: RecallConfig(legs=(Leg.BM25,)),
    Preset.DENSE: RecallConfig(legs=(Leg.VECTOR,)),
    Preset.HYBRID: RecallConfig(legs=_HYBRID),
    # provenance: a derived memory and its sources in one slot, amended rules first (issue 10)
    Preset.DEFAULT: RecallConfig(legs=_HYBRID, stages=(Stage.SESSION_CONTEXT, Stage.PROVENANCE)),
    Preset.GRAPH: RecallConfig(legs=_HYBRID + (Leg.GRAPH,), stages=(Stage.GRAPH_BOOST,)),
    Preset.GRAPH_BOOST: RecallConfig(legs=_HYBRID, stages=(Stage.GRAPH_BOOST,)),
    Preset.DAMPENING: RecallConfig(legs=_HYBRID, stages=(Stage.DAMPENING,)),
    Preset.RERANK: RecallConfig(legs=_HYBRID, stages=(Stage.RERANK,)),
    Preset.HINTS: RecallConfig(legs=_HYBRID, extras=ExtrasConfig(hints=True)),
    Preset.CONTEXT: RecallConfig(legs=_HYBRID, stages=(Stage.SESSION_CONTEXT,)),
    Preset.CODE: RecallConfig(legs=_HYBRID, stages=(Stage.SESSION_CONTEXT, Stage.CODE_NEIGHBOURHOOD)),  # issue 15
    Preset.FULL: RecallConfig(
        legs=_HYBRID + (Leg.GRAPH,), stages=(Stage.SESSION_CONTEXT, Stage.GRAPH_BOOST, Stage.DAMPENING, Stage.RERANK),
        extras=ExtrasConfig(hints=True),
    ),
})


def preset_name(name: Preset | str) -> Preset:
    """The Preset `name` denotes; InvalidInput naming the presets when it is none."""
    try:
        return Preset(name)
    except ValueError:
        raise InvalidInput(f"unknown recall preset {name!r}; choose from {', '.join(PRESETS)}") from None


def preset(name: Preset | str) -> RecallConfig:
    """A preset as defined (no settings applied: see effective_config)."""
    return PRESETS[preset_name(name)]


def effective_config(settings: Settings, preset: Preset | str | None = None, **overrides: object) -> RecallConfig:
    """The config a recall runs with. Precedence, lowest first:

    1. RecallConfig's defaults;
    2. the settings, for every preset: `recall.rrf_k`, `recall.candidate_pool` (leg_limit),
       `recall.topic_diversity` — unless the preset's definition sets that field itself;
    3. the preset (`preset`, else `default`): its legs, stages, weights and extras. The default
       preset, named or not, also follows two switches: `recall.session_context` false drops its
       session_context stage, `pipeline.hints.enabled` lets its BM25 leg match hints;
    4. `overrides`: RecallConfig fields the caller names (benchmarks, tests).

    A bad preset name raises InvalidInput, a bad override a pydantic ValidationError naming the
    allowed values.
    """
    name = preset_name(preset) if preset is not None else Preset.DEFAULT
    base = PRESETS[name]
    rs = settings.recall
    knobs = {"rrf_k": rs.rrf_k, "leg_limit": rs.candidate_pool, "topic_diversity": rs.topic_diversity}
    changes: dict[str, object] = {k: v for k, v in knobs.items() if k not in base.model_fields_set}
    if name is Preset.DEFAULT:
        if not rs.session_context:
            changes["stages"] = tuple(s for s in base.stages if s is not Stage.SESSION_CONTEXT)
        changes["extras"] = replace(base.extras, hints=settings.pipeline.hints.enabled)
    return base.with_(**{**changes, "preset": name, **overrides})
