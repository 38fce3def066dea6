"""Controlled writes: apply proposals in ONE write transaction, audit every one of them.

memory-pipeline-v2 "Controlled Writes" (applyPhaseCWrites), with one change the issue asks
for: UPDATE and DELETE are applied in `full` mode as *non-destructive supersession* — the
old memory keeps its row, gets `superseded_by` and `valid_until`, and recall hides it unless
`include_superseded`. Nothing here calls an LLM, the network or an embedding model:
vectors are computed before (`vectors` keyed by content_hash).

Per mode (PipelineSettings.mode):
- shadow: nothing is written to memories; every proposal is audited with outcome `shadow`.
- controlled-write: ADD applied, NONE recorded, UPDATE/DELETE blocked (`update_delete_not_allowed`).
- full: as controlled-write, plus UPDATE (new fact supersedes target) and DELETE (the target
  is superseded by the source memory, the evidence that it no longer holds).
Gates: fact confidence < min_confidence ⇒ `low_fact_confidence`; empty content ⇒
`empty_fact_content`; an exact duplicate (content_hash) ⇒ `deduped` with the existing id;
UPDATE/DELETE also need decision confidence ≥ min_confidence and a live, unpinned, non-episode,
not user-verified target no newer than the source (the older memory loses, so two related
memories can never supersede each other). A new fact carries `derived_from` = [source] and
the source's time. Audit rows: memory_history(event='pipeline_proposal') on the
source memory with action, outcome, reason, fact, confidence, target, created id, model,
fact and entity counts, review_needed. New facts are stored through the write path
(memory.write.WritePath: draft rules such as decision auto-protection, the entity linker and
the other in-transaction hooks), like every other memory.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from kenning.core.errors import InvalidInput, NotFound
from kenning.core.telemetry import record_error
from kenning.core.text import normalize_content
from kenning.core.types import Memory, MemoryDraft, Viewer
from kenning.pipeline.decision import Proposal
from kenning.store import memories as mstore
from kenning.store import pipeline as pstore
from kenning.memory.write import WritePath
from kenning.store.backend import Connection
from kenning.store.db import IntegrityError

ACTOR = "pipeline-v2"
SOURCE_TAG = "pipeline-v2:extracted-fact"
WRITE_MODES = ("controlled-write", "full")
RAW_TYPES = frozenset({"episode"})  # what was said stays; only extracted statements are superseded


@dataclass
class WriteContext:
    source: Memory
    writer: WritePath
    mode: str
    min_confidence: float
    extraction_model: str
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    fact_count: int = 0
    entity_count: int = 0
    frozen: bool = False


@dataclass
class WriteOutcome:
    outcomes: Counter = field(default_factory=Counter)
    reasons: Counter = field(default_factory=Counter)
    created: list[str] = field(default_factory=list)
    deduped: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    review_needed: int = 0
    audits: int = 0

    def to_dict(self) -> dict[str, object]:
        return {"outcomes": dict(self.outcomes), "reasons": dict(self.reasons), "created": self.created,
                "deduped": self.deduped, "superseded": self.superseded,
                "review_needed": self.review_needed, "audits": self.audits}


def _insert_fact(conn: Connection, content: str, proposal: Proposal, ctx: WriteContext) -> tuple[str, bool]:
    """Insert the fact as a new memory through the write path (its vector computed earlier, in
    `ctx.vectors`), or return the exact duplicate. (id, deduped)."""
    norm = normalize_content(content)
    writer = Viewer(ctx.source.author, ctx.source.team) if ctx.source.author else None  # facts keep the
    existing = mstore.find_duplicate(conn, norm.content_hash, ctx.source.project, writer)  # source's author
    if existing:
        return existing, True
    item = ctx.writer.prepare([MemoryDraft(writer=writer,
        content=norm.storage, type=proposal.fact.type, confidence=proposal.fact.confidence,
        tags=list(ctx.source.tags), project=ctx.source.project, scope=ctx.source.scope,
        source=SOURCE_TAG, session_key=ctx.source.session_key, created_at=ctx.source.created_at,
        metadata={"source_memory_id": ctx.source.id, "derived": True,
                  **({"claim": proposal.fact.evidence} if proposal.fact.evidence else {})},
        derived_from=[ctx.source.id],
    )], vectors=ctx.vectors)[0]  # never embeds: the vectors were computed before the write tx
    try:
        result = ctx.writer.store(conn, item, actor=ACTOR)
    except IntegrityError:  # defensive: a UNIQUE collision is a duplicate too
        existing = mstore.find_duplicate(conn, norm.content_hash, ctx.source.project)
        if existing is None:
            raise
        return existing, True
    if not result.deduped:
        pstore.set_extraction_model(conn, result.id, ctx.extraction_model)
    return result.id, result.deduped


def _apply_add(conn: Connection, p: Proposal, ctx: WriteContext, out: WriteOutcome) -> tuple[str, str, str | None]:
    if p.fact.confidence < ctx.min_confidence:
        return "skipped", "low_fact_confidence", None
    if not normalize_content(p.fact.content).normalized:
        return "skipped", "empty_fact_content", None
    memory_id, deduped = _insert_fact(conn, p.fact.content, p, ctx)
    if deduped:
        out.deduped.append(memory_id)
        return "deduped", "exact_duplicate", memory_id
    out.created.append(memory_id)
    return "created", "applied", memory_id


def _live_target(conn: Connection, p: Proposal, ctx: WriteContext) -> tuple[Memory | None, str | None]:
    try:
        target = mstore.get_memory(conn, p.target_id or "")
    except NotFound:
        return None, "target_missing"
    if target.is_deleted or target.superseded_by:
        return None, "target_unavailable"
    if target.pinned or target.user_verified or target.type in RAW_TYPES:
        return None, "target_protected"
    if target.id == ctx.source.id:
        return None, "target_is_source"
    if mstore.is_newer(conn, target.id, ctx.source.id):  # the older memory loses, never the newer: no cycles
        return None, "target_is_newer"
    return target, None


def _apply_destructive(conn: Connection, p: Proposal, ctx: WriteContext, out: WriteOutcome) -> tuple[str, str, str | None]:
    if ctx.mode != "full":
        return "blocked", "update_delete_not_allowed", None
    if p.confidence < ctx.min_confidence:
        return "skipped", "low_decision_confidence", None
    target, problem = _live_target(conn, p, ctx)
    if target is None:
        return ("blocked" if problem == "target_protected" else "skipped"), problem or "", None
    if p.action == "DELETE":
        by_id = ctx.source.id
    else:
        if p.fact.confidence < ctx.min_confidence:
            return "skipped", "low_fact_confidence", None
        by_id, deduped = _insert_fact(conn, p.fact.content, p, ctx)
        (out.deduped if deduped else out.created).append(by_id)
        if by_id == target.id:
            return "recorded", "fact_equals_target", by_id
    pstore.supersede(conn, target.id, by_id, reason=f"{p.action}: {p.reason}"[:500])
    out.superseded.append(target.id)
    return "superseded", "applied", by_id


def _apply_one(conn: Connection, p: Proposal, ctx: WriteContext, out: WriteOutcome) -> tuple[str, str, str | None]:
    if ctx.mode not in WRITE_MODES:
        return "shadow", "mutations_frozen" if ctx.frozen else "shadow_mode", None
    if p.action == "NONE":
        return "recorded", "no_change", None
    try:
        if p.action == "ADD":
            return _apply_add(conn, p, ctx, out)
        return _apply_destructive(conn, p, ctx, out)
    except InvalidInput as exc:  # the write path refused the fact (before writing anything)
        record_error("pipeline", f"fact refused by the write path: {exc}", memory_id=ctx.source.id)
        return "skipped", "invalid_fact", None


def _audit(conn: Connection, p: Proposal, ctx: WriteContext, outcome: str, reason: str, result_id: str | None) -> None:
    changes = {
        "action": p.action, "outcome": outcome, "reason": reason, "decision_reason": p.reason,
        "fact": p.fact.content, "fact_type": p.fact.type, "fact_confidence": p.fact.confidence,
        "confidence": p.confidence, "target_id": p.target_id, "result_id": result_id,
        "source_memory_id": ctx.source.id, "extraction_model": ctx.extraction_model,
        "fact_count": ctx.fact_count, "entity_count": ctx.entity_count, "mode": ctx.mode,
        "review_needed": p.review_needed, "contradiction": p.contradiction,
        "candidate_ids": p.candidate_ids, "used_llm": p.used_llm,
    }
    mstore.add_history(conn, ctx.source.id, "pipeline_proposal", new_content=p.fact.content,
                       changes=changes, actor=ACTOR, reason=f"{p.action}:{outcome}:{reason}")


def apply_proposals(proposals: list[Proposal], ctx: WriteContext) -> WriteOutcome:
    """Apply (or just audit) every proposal inside one write transaction."""
    out = WriteOutcome()
    with ctx.writer.db.with_write_tx() as conn:
        for proposal in proposals:
            outcome, reason, result_id = _apply_one(conn, proposal, ctx, out)
            _audit(conn, proposal, ctx, outcome, reason, result_id)
            out.outcomes[f"{proposal.action}:{outcome}"] += 1
            out.reasons[reason] += 1
            out.review_needed += int(proposal.review_needed)
            out.audits += 1
    return out
