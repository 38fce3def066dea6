"""One extraction job end to end: extract → decide per fact → contradiction → writes → graph.

Two-phase discipline (memory-pipeline-v2): every LLM call, candidate search and embedding
happens first, outside any transaction; then `apply_proposals` commits in one write tx;
then entity triples are persisted in their own short tx (non-fatal: a graph failure is a
warning, never a rollback of the facts). The raw memory was committed by `remember` before
this job existed, so nothing here can lose what the caller wrote.

`run_extraction(ctx, memory_id)` returns the JSON-able result stored on the job. It raises
ProviderError (incl. BudgetExhausted) when the LLM fails, so the worker retries/defers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kenning.core import telemetry
from kenning.core.config_pipeline import PipelineSettings
from kenning.core.errors import NotFound
from kenning.core.text import normalize_content
from kenning.core.types import Memory, Viewer
from kenning.pipeline import contradiction
from kenning.pipeline.decision import Candidate, CandidateFinder, Proposal, decide
from kenning.pipeline.extraction import ExtractionResult, Fact, extract, restates_source
from kenning.memory.write import WritePath
from kenning.pipeline.writes import SOURCE_TAG, WriteContext, apply_proposals
from kenning.providers.embedding import EmbeddingProvider
from kenning.providers.llm import BaseLLMProvider
from kenning.store import graph as gstore
from kenning.store import memories as mstore
from kenning.store.db import Database

MAX_WARNINGS_IN_RESULT = 50
SKIP_TYPES = frozenset({"document_chunk"})


@dataclass
class PipelineContext:
    db: Database
    provider: BaseLLMProvider
    settings: PipelineSettings
    writer: WritePath  # the write path new facts go through (dedup, rules, linker, hooks)
    find_candidates: CandidateFinder | None = None
    on_created: Callable[[list[str]], None] | None = None  # e.g. enqueue hint jobs

    @property
    def embedder(self) -> EmbeddingProvider:
        return self.writer.embedder

    @property
    def extraction_model(self) -> str:
        return f"{self.provider.name}:{self.provider.model}"


def _skip_reason(memory_id: str, db: Database) -> tuple[Memory | None, str | None]:
    try:
        memory = mstore.get_memory(db.reader(), memory_id)
    except NotFound:
        return None, "memory not found"
    if memory.is_deleted:
        return memory, "memory deleted"
    if memory.source == SOURCE_TAG:
        return memory, "memory was derived by the pipeline"
    if memory.type in SKIP_TYPES:
        return memory, f"type {memory.type} is not extracted"
    return memory, None


def _candidates(ctx: PipelineContext, text: str, exclude: set[str], project: str | None,
                viewer: Viewer | None = None) -> list[Candidate]:
    if ctx.find_candidates is None:
        return []
    cfg = ctx.settings.extraction
    found = ctx.find_candidates(text, cfg.candidates, exclude, project, viewer)
    return [c for c in found if c.id not in exclude and c.score >= cfg.candidate_min_score][: cfg.candidates]


def drop_source_noops(memory: Memory, proposals: list[Proposal]) -> tuple[list[Proposal], int]:
    """A fact that IS the source memory (same content hash), or a plain fact that restates it
    (`restates_source`), proposed as ADD or NONE changes nothing: the raw memory already holds it.
    Those are not proposals worth an audit row; an UPDATE/DELETE from such a fact (the new memory
    supersedes an old one) is kept."""
    kept = [p for p in proposals if p.action in ("UPDATE", "DELETE")
            or normalize_content(p.fact.content).content_hash != memory.content_hash
            and not restates_source(p.fact, memory.content)]
    return kept, len(proposals) - len(kept)


def decide_all(ctx: PipelineContext, memory: Memory, facts: list[Fact],
               warnings: list[str]) -> list[Proposal]:
    """A proposal per fact (facts whose decision answer is unusable are skipped with a warning)."""
    proposals = []
    timeout_s = ctx.settings.extraction.timeout / 1000.0
    for fact in facts:
        viewer = Viewer(memory.author, memory.team) if memory.author else None  # never act on what the
        candidates = _candidates(ctx, fact.content, {memory.id}, memory.project, viewer)  # author can't see
        proposal = decide(ctx.provider, fact, candidates, warnings, timeout_s=timeout_s)
        if proposal is not None:
            proposals.append(proposal)
    return proposals


def flag_contradictions(ctx: PipelineContext, proposals: list[Proposal]) -> None:
    s = ctx.settings
    for p in proposals:
        if p.action not in ("UPDATE", "DELETE") or not p.target_content:
            continue
        found = contradiction.check(
            ctx.provider, p.action, p.fact.content, p.target_content,
            semantic_enabled=s.semantic_contradiction_enabled,
            timeout_s=s.semantic_contradiction_timeout_ms / 1000.0,
        )
        if found:
            p.review_needed, p.contradiction = True, found


def embed_facts(ctx: PipelineContext, facts: list[Fact]) -> dict[str, np.ndarray]:
    """Embed every fact in ONE batch before any transaction: the vectors serve the candidate
    search (primed into the embedder's query cache) and the writes (keyed by content_hash)."""
    if not facts:
        return {}
    texts = [f.content for f in facts]
    vectors = ctx.embedder.embed_many(texts)
    prime = getattr(ctx.embedder, "prime_query_cache", None)
    if prime is not None:
        prime(texts, vectors)
    return {normalize_content(t).content_hash: v for t, v in zip(texts, vectors)}


def prefetch_vectors(proposals: list[Proposal], vectors: dict[str, np.ndarray], mode: str) -> dict[str, np.ndarray]:
    """The vectors of facts that may be inserted (none in shadow mode)."""
    if mode not in ("controlled-write", "full"):
        return {}
    wanted = {normalize_content(p.fact.content).content_hash for p in proposals if p.action in ("ADD", "UPDATE")}
    return {h: v for h, v in vectors.items() if h in wanted}


def persist_graph(ctx: PipelineContext, memory_id: str, result: ExtractionResult, mode: str,
                  warnings: list[str]) -> dict[str, int] | None:
    if not ctx.settings.graph.enabled or mode not in ("controlled-write", "full") or not result.entities:
        return None
    try:
        with ctx.db.with_write_tx() as conn:
            return gstore.persist_triples(conn, memory_id, result.triples(), source="pipeline")
    except Exception as exc:  # non-fatal by design: facts stay committed
        warnings.append(f"graph persistence failed: {type(exc).__name__}: {exc}")
        telemetry.record_error("pipeline", f"graph persistence failed: {exc}", memory_id=memory_id)
        return None


def run_extraction(ctx: PipelineContext, memory_id: str) -> dict[str, object]:
    """Process one memory; the returned dict is the job's result payload."""
    settings = ctx.settings
    memory, skip = _skip_reason(memory_id, ctx.db)
    if skip:
        return {"memory_id": memory_id, "skipped": skip}
    mode = settings.mode
    result = extract(ctx.provider, memory.content, settings.extraction)
    warnings = list(result.warnings)
    fact_vectors = embed_facts(ctx, result.facts)
    proposals, same_as_source = drop_source_noops(memory, decide_all(ctx, memory, result.facts, warnings))
    flag_contradictions(ctx, proposals)
    vectors = prefetch_vectors(proposals, fact_vectors, mode)
    wctx = WriteContext(
        source=memory, writer=ctx.writer, mode=mode, min_confidence=settings.extraction.min_confidence,
        extraction_model=ctx.extraction_model,
        vectors=vectors,
        fact_count=len(result.facts), entity_count=len(result.entities), frozen=settings.mutations_frozen,
    )
    outcome = apply_proposals(proposals, wctx)
    graph = persist_graph(ctx, memory.id, result, mode, warnings)
    if ctx.on_created and outcome.created:
        ctx.on_created(outcome.created)
    for warning in warnings[:5]:
        telemetry.log_event("pipeline", warning, level="warning", memory_id=memory.id)
    return {
        "memory_id": memory.id, "mode": mode, "extraction_model": ctx.extraction_model,
        **result.summary(), "source_noops": same_as_source, "proposals": len(proposals), **outcome.to_dict(), "graph": graph,
        "warnings": warnings[:MAX_WARNINGS_IN_RESULT], "warning_count": len(warnings),
    }
