"""One extraction job end to end: extract → decide per fact → contradiction → writes → graph.

Two-phase discipline (memory-pipeline-v2): every LLM call, candidate search and embedding
happens first, outside any transaction; then `apply_proposals` commits in one write tx;
then entity triples are persisted in their own short tx (non-fatal: a graph failure is a
warning, never a rollback of the facts). The raw memory was committed by `remember` before
this job existed, so nothing here can lose what the caller wrote.

`run_extraction(ctx, memory_id)` returns the JSON-able result stored on the job. It raises
ProviderError (incl. BudgetExhausted) when the LLM fails, so the worker retries/defers.

Work whose result is already known is skipped (issue 36; the result says `skipped` and why): a
near-duplicate of an older memory the same writer can see whose extraction already ran or is
queued (NEAR_DUPLICATE cosine, on the vectors already stored: no model call) is extracted once, as
that memory; an imported memory (stored in a bulk write) whose every extracted fact restates it is
already a distilled claim, so no fact is embedded or decided. A memory an agent remembers one at
a time still goes through the decision stage, which may find that it supersedes an older one.
When extraction is free (a provider that spends no tokens: the offline rules) an imported memory's
claim test runs before the near-duplicate check: most of an import is one claim per memory, and the
check's KNN reads every stored vector (at 20k, the larger part of a skipped job's CPU). With an LLM
the local check goes first, so a twin costs no call.
`ctx.pause` (the worker's yield to the agent's requests) runs between the stages.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kenning.core import telemetry
from kenning.core.config_pipeline import PipelineSettings
from kenning.core.errors import NotFound
from kenning.core.text import normalize_content
from kenning.core.types import Memory, MemoryFilter, Viewer
from kenning.pipeline import contradiction
from kenning.pipeline.decision import Candidate, CandidateFinder, Proposal, decide
from kenning.pipeline.extraction import ExtractionResult, Fact, extract, restates_source
from kenning.pipeline.hooks import EXTRACT_JOB
from kenning.memory.write import WritePath
from kenning.pipeline.writes import SOURCE_TAG, WriteContext, apply_proposals
from kenning.providers.embedding import EmbeddingProvider
from kenning.providers.llm import BaseLLMProvider
from kenning.store import graph as gstore
from kenning.store import jobs as jobstore
from kenning.store import memories as mstore
from kenning.store import search as search_store
from kenning.store import vectors as vstore
from kenning.store.backend import StoreDatabase

MAX_WARNINGS_IN_RESULT = 50
SKIP_TYPES = frozenset({"document_chunk"})
NEAR_DUPLICATE = 0.97  # cosine of two memories' vectors above which the older one's extraction stands for both


@dataclass
class PipelineContext:
    db: StoreDatabase
    provider: BaseLLMProvider
    settings: PipelineSettings
    writer: WritePath  # the write path new facts go through (dedup, rules, linker, hooks)
    find_candidates: CandidateFinder | None = None
    on_created: Callable[[list[str]], None] | None = None  # e.g. enqueue hint jobs
    pause: Callable[[], object] | None = None  # between stages: the worker yields to the agent's requests

    @property
    def embedder(self) -> EmbeddingProvider:
        return self.writer.embedder

    @property
    def extraction_model(self) -> str:
        return f"{self.provider.name}:{self.provider.model}"


def _skip_reason(memory_id: str, db: StoreDatabase) -> tuple[Memory | None, str | None]:
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
        _pause(ctx)  # each fact's candidate search is a recall of its own: the agent's go first
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
    ctx.embedder.prime_query_cache(texts, vectors)
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


def near_duplicate_of(ctx: PipelineContext, memory: Memory) -> str | None:
    """An older memory the same writer can see, in the same project, whose vector is within
    NEAR_DUPLICATE of this one's and whose extraction ran or is queued; None when there is none."""
    conn = ctx.db.reader()
    model = ctx.embedder.model_id
    vector = vstore.get_embeddings(conn, [memory.content_hash], model).get(memory.content_hash)
    if vector is None:
        return None
    near = [h for h, similarity in vstore.knn(conn, vector, model, 8)
            if similarity >= NEAR_DUPLICATE and h != memory.content_hash]
    if not near:  # the common case: one KNN probe over the vectors already stored, no SQL
        return None
    viewer = Viewer(memory.author, memory.team) if memory.author else None
    hits = search_store.vector_search(conn, vector, model, MemoryFilter(project=memory.project, viewer=viewer), 4)
    for other_id, similarity in hits:
        if other_id == memory.id or similarity < NEAR_DUPLICATE:
            continue
        if mstore.is_newer(conn, memory.id, other_id) and jobstore.latest_for_key(conn, EXTRACT_JOB, other_id):
            return other_id
    return None


def already_distilled(memory: Memory, result: ExtractionResult) -> bool:
    """Every fact extracted from `memory` restates it: the memory already is its one distilled claim."""
    return bool(result.facts) and all(
        normalize_content(f.content).content_hash == memory.content_hash or restates_source(f, memory.content)
        for f in result.facts)


def _pause(ctx: PipelineContext) -> None:
    if ctx.pause is not None:
        ctx.pause()


def run_extraction(ctx: PipelineContext, memory_id: str, *, imported: bool = False) -> dict[str, object]:
    """Process one memory; the returned dict is the job's result payload. `imported`: the memory
    came in a bulk write (an import), see the module doc."""
    settings = ctx.settings
    memory, skip = _skip_reason(memory_id, ctx.db)
    if skip or memory is None:  # (no memory comes with its reason)
        return {"memory_id": memory_id, "skipped": skip}
    claim_first = imported and not ctx.provider.counts_tokens  # see the module doc
    result = extract(ctx.provider, memory.content, settings.extraction) if claim_first else None
    if result is not None and already_distilled(memory, result):
        return {"memory_id": memory_id, "skipped": "already a distilled claim", "facts": len(result.facts)}
    twin = near_duplicate_of(ctx, memory)
    if twin is not None:
        return {"memory_id": memory_id, "skipped": f"near-duplicate ({twin})"}
    mode = settings.mode
    if result is None:
        result = extract(ctx.provider, memory.content, settings.extraction)
        if imported and already_distilled(memory, result):
            return {"memory_id": memory_id, "skipped": "already a distilled claim", "facts": len(result.facts)}
    warnings = list(result.warnings)
    _pause(ctx)
    fact_vectors = embed_facts(ctx, result.facts)
    proposals, same_as_source = drop_source_noops(memory, decide_all(ctx, memory, result.facts, warnings))
    _pause(ctx)
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
