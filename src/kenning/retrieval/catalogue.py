"""The recall catalogue: every candidate leg and post-fusion stage, by the enum names a RecallConfig
uses (retrieval.config: Leg, Stage, Preset). Adding one is a member there and one line here;
nothing registers itself (tests/retrieval checks every name has its function).

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
from types import MappingProxyType

from kenning.retrieval.code_neighbourhood import code_neighbourhood
from kenning.retrieval.config import Leg, Stage
from kenning.retrieval.dampening import dampen
from kenning.retrieval.graph_leg import graph_boost, graph_leg
from kenning.retrieval.fusion import FusedHit
from kenning.retrieval.legs import LegFn, RecallContext, StageFn, bm25_leg, vector_leg
from kenning.retrieval.provenance import provenance
from kenning.retrieval.rerank import rerank_stage
from kenning.retrieval.session_context import session_context


def _graph_boost_stage(ctx: RecallContext, hits: list[FusedHit]) -> list[FusedHit]:
    return graph_boost(ctx, hits, ctx.config.extras.graph_boost_weight)


def _dampening_stage(ctx: RecallContext, hits: list[FusedHit]) -> list[FusedHit]:
    return dampen(ctx, hits, ctx.config.extras.dampening)


def _rerank_stage(ctx: RecallContext, hits: list[FusedHit]) -> list[FusedHit]:
    extras = ctx.config.extras
    return rerank_stage(ctx, hits, top_n=extras.rerank_top_n, timeout_ms=extras.rerank_timeout_ms)


def _session_context_stage(ctx: RecallContext, hits: list[FusedHit]) -> list[FusedHit]:
    return session_context(ctx, hits, ctx.config.extras.session_context)


LEGS: Mapping[Leg, LegFn] = MappingProxyType({
    Leg.BM25: bm25_leg,
    Leg.VECTOR: vector_leg,
    Leg.GRAPH: graph_leg,
})
STAGES: Mapping[Stage, StageFn] = MappingProxyType({
    Stage.GRAPH_BOOST: _graph_boost_stage,
    Stage.DAMPENING: _dampening_stage,
    Stage.RERANK: _rerank_stage,
    Stage.SESSION_CONTEXT: _session_context_stage,
    Stage.CODE_NEIGHBOURHOOD: code_neighbourhood,  # off by default (issue 15): preset "code"
    Stage.PROVENANCE: provenance,
})
