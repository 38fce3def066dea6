"""The recall catalogue: every candidate leg and post-fusion stage, by the names a RecallConfig
uses (presets in retrieval.config). Adding one is one line here; nothing registers itself.

Legs:   "bm25", "vector" (retrieval.legs)
        "graph"        token → entity → one hop → memories (retrieval.graph_leg)
Stages: "graph_boost"  lift co-located hits (and graph-linked ones when the leg is off)
        "dampening"    gravity, hub, resolution (retrieval.dampening)
        "rerank"       embedding reranker with timeout (retrieval.rerank)
        "session_context"  neighbours in the same session share a hit's score (retrieval.session_context)
        "code_neighbourhood"  memories linked to code the query names, or to its neighbours (off by default)
        "provenance"   derived memory + sources in one slot, amended rules first (retrieval.provenance)
Hints are not a leg: `RecallConfig.extras.hints` makes the BM25 leg merge hint matches by max.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from types import MappingProxyType

from kenning.core.telemetry import log_event

from kenning.retrieval.code_neighbourhood import code_neighbourhood
from kenning.retrieval.config import RecallConfig
from kenning.retrieval.dampening import DampeningParams, dampen
from kenning.retrieval.extras_config import ExtrasConfig
from kenning.retrieval.graph_leg import graph_boost, graph_leg
from kenning.retrieval.legs import LegFn, StageFn, bm25_leg, vector_leg
from kenning.retrieval.provenance import provenance
from kenning.retrieval.rerank import rerank_stage
from kenning.retrieval.session_context import session_context


def _graph_boost_stage(ctx, hits):
    return graph_boost(ctx, hits, ctx.config.extras.graph_boost_weight)


def _dampening_stage(ctx, hits):
    return dampen(ctx, hits, ctx.config.extras.dampening)


def _rerank_stage(ctx, hits):
    extras = ctx.config.extras
    return rerank_stage(ctx, hits, top_n=extras.rerank_top_n, timeout_ms=extras.rerank_timeout_ms)


def _session_context_stage(ctx, hits):
    return session_context(ctx, hits, ctx.config.extras.session_context)


LEGS: Mapping[str, LegFn] = MappingProxyType({
    "bm25": bm25_leg,
    "vector": vector_leg,
    "graph": graph_leg,
})
STAGES: Mapping[str, StageFn] = MappingProxyType({
    "graph_boost": _graph_boost_stage,
    "dampening": _dampening_stage,
    "rerank": _rerank_stage,
    "session_context": _session_context_stage,
    "code_neighbourhood": code_neighbourhood,  # off by default (issue 15): preset "code"
    "provenance": provenance,
})


def config_from_settings(pipeline, base: RecallConfig) -> RecallConfig:
    """`base` with the graph leg/boost, dampening, rerank and hints switched by `pipeline:`."""
    legs = [leg for leg in base.legs if leg != "graph"]
    stages = [s for s in base.stages if s not in ("graph_boost", "dampening", "rerank")]
    if pipeline.graph.enabled:
        legs.append("graph")
        stages.append("graph_boost")
    d = pipeline.dampening
    if d.gravity_enabled or d.hub_enabled or d.resolution_enabled:
        stages.append("dampening")
    if pipeline.reranker.enabled:
        stages.append("rerank")
        if pipeline.reranker.model:
            log_event("retrieval", "no cross-encoder ships in a package; using the embedding reranker",
                      level="warning", model=pipeline.reranker.model)
    extras = ExtrasConfig(
        hints=pipeline.hints.enabled,
        graph_boost_weight=pipeline.graph.boost_weight,
        dampening=DampeningParams(
            gravity_enabled=d.gravity_enabled, hub_enabled=d.hub_enabled,
            resolution_enabled=d.resolution_enabled, hub_percentile=d.hub_percentile,
            hub_penalty=d.hub_penalty, gravity_penalty=d.gravity_penalty, resolution_boost=d.resolution_boost,
        ),
        rerank_top_n=pipeline.reranker.top_n,
        rerank_timeout_ms=float(pipeline.reranker.timeout_ms),
    )
    return replace(base, legs=tuple(legs), stages=tuple(stages), extras=extras,
                   graph_deadline_ms=float(pipeline.graph.boost_timeout_ms))
