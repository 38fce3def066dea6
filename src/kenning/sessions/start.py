"""session-start: pre-filter → baseline ranking → predictor (seam) → diversity → budget → inject.

Scorer seed "Hook Flow": the pool is effective_score top-k ∪ embedding-similarity top-k
against the session context (≤ max_candidates for any corpus size); the baseline ranks by
effective_score; when a predictor is attached and answers, its scores are recorded and fused
(`predictor.fuse`); topic-diversity decay picks the injected top-k within the character
budget. **Every candidate** is recorded in session_memories. Injection is not an access:
nothing here touches access_count / last_accessed_at. Re-running for a key returns the
recorded injection without recording anything twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kenning.core.telemetry import record_error
from kenning.core.types import Viewer
from kenning.predictor.fusion import Fused
from kenning.sessions.context import Deadline, SessionDeps, run_bounded
from kenning.sessions.inject import item_cost, session_start_text
from kenning.store import sessions as store
from kenning.store.memories import get_memories
from kenning.store.vectors import get_embeddings

RESERVE_MS = 60.0  # kept back from optional stages for ranking, recording and rendering


@dataclass
class StartRequest:
    session_key: str
    harness: str | None = None
    project: str | None = None
    cwd: str | None = None
    context: str | None = None
    at: str = ""
    viewer: Viewer | None = None  # a team server's user: only what they may see is offered


@dataclass
class StartResult:
    inject: str
    memory_ids: list[str]
    candidates: int
    status_line: str
    created: bool = True
    cut: list[str] = field(default_factory=list)
    predictor_used: bool = False


@dataclass
class _Scored:
    memory: Any
    prefilter: str
    effective: float
    similarity: float | None = None
    vector: Any = None
    baseline_rank: int = 0
    predictor_score: float | None = None
    predictor_rank: int | None = None
    final: float = 0.0
    factor: float | None = None
    source: str = "effective"  # which ranker put it here: effective | predictor | both | exploration

    # the attribute names diversity_select reads
    @property
    def memory_id(self) -> str:
        return self.memory.id

    @property
    def score(self) -> float:
        return self.final

    @property
    def chars(self) -> int:
        return item_cost(self.memory.content)


def status_line(deps: SessionDeps) -> str:
    predictor = deps.predictor
    if predictor is not None and hasattr(predictor, "status_line"):
        try:
            line = predictor.status_line()
            if isinstance(line, str) and line:
                return line
        except Exception as exc:  # the predictor is optional: report and fall back
            record_error("sessions", f"predictor.status_line failed: {exc}")
    scored = store.scored_session_count(deps.db.reader())
    return f"[predictor: off | {scored} sessions scored | baseline only]"


def session_context_text(req: StartRequest, deps: SessionDeps) -> str:
    """Project, cwd, caller context and the project's latest checkpoint, for similarity."""
    parts = [p for p in (req.project, req.cwd, req.context) if p]
    latest = store.latest_checkpoint(deps.db.reader(), project=req.project, before=req.at)
    if latest:
        parts.append(latest["content"][-1500:])
    return "\n".join(parts)


def prefilter(req: StartRequest, deps: SessionDeps, deadline: Deadline, ctx: _Ctx) -> list[_Scored]:
    """effective_score top-k ∪ similarity top-k, capped at max_candidates (sets ctx.vector)."""
    context_text = ctx.text
    cfg = deps.settings
    conn = deps.db.reader()
    effective_ids = store.top_by_effective_score(conn, project=req.project, at=req.at,
                                                 limit=cfg.prefilter_effective_k, viewer=req.viewer)
    similar: list[tuple[str, float]] = []
    if context_text and cfg.prefilter_similarity_k:
        try:
            vector = run_bounded(deadline, "similarity", lambda: deps.embedder.embed_query(context_text),
                                 reserve_ms=RESERVE_MS)
            ctx.vector = vector
            if vector is not None:
                similar = store.top_by_similarity(
                    conn, vector, deps.embedder.model_id, project=req.project, at=req.at,
                    limit=cfg.prefilter_similarity_k, viewer=req.viewer,
                )
        except Exception as exc:  # similarity is an optional leg: keep the effective_score pool
            record_error("sessions", f"session-start similarity leg failed: {exc}", session_key=req.session_key)
    sim = dict(similar)
    order: list[str] = []
    for memory_id in [*effective_ids, *(m for m, _ in similar)]:
        if memory_id not in order:
            order.append(memory_id)
    order = order[: cfg.max_candidates]
    memories = get_memories(conn, order)
    effective_set = set(effective_ids)
    pool = []
    for memory_id in order:
        memory = memories.get(memory_id)
        if memory is None:
            continue
        path = "both" if memory_id in effective_set and memory_id in sim else (
            "effective" if memory_id in effective_set else "similarity")
        pool.append(_Scored(memory, path, deps.effective_score(memory, req.at), sim.get(memory_id)))
    vectors = get_embeddings(conn, list({c.memory.content_hash for c in pool}), deps.embedder.model_id)
    for cand in pool:
        cand.vector = vectors.get(cand.memory.content_hash)
    return pool


@dataclass
class _Ctx:
    """The session context as the predictor wants it (text + its embedding when we made one)."""

    text: str
    vector: Any = None


def _predictor_pass(req: StartRequest, deps: SessionDeps, pool: list[_Scored], ctx: _Ctx,
                    baseline_ids: list[str], deadline: Deadline) -> list[Fused] | None:
    """Predictor scores → the fused ranking (predictor.fusion.Fused rows), or None (baseline).

    Interface: context.SessionPredictor (score / fuse / status_line / on_session_end).
    """
    predictor = deps.predictor
    if predictor is None or not hasattr(predictor, "score") or not pool:
        return None
    session_context = {
        "session_key": req.session_key, "project": req.project, "embedding": ctx.vector,
        "text": ctx.text, "timestamp": req.at, "session_gap_hours": None, "cwd": req.cwd, "harness": req.harness,
    }
    candidates = [
        {**c.memory.to_dict(), "embedding": c.vector, "effective_score": c.effective, "similarity": c.similarity,
         "baseline_rank": c.baseline_rank, "prefilter_source": c.prefilter}
        for c in pool
    ]
    try:
        scores = run_bounded(deadline, "predictor", lambda: predictor.score(session_context, candidates),
                             reserve_ms=RESERVE_MS / 2)
        if not scores:
            return None
        fused = predictor.fuse(baseline_ids, scores, top_k=deps.settings.inject_limit)
    except Exception as exc:  # a failing predictor must never cost the answer
        record_error("sessions", f"predictor failed, baseline used: {exc}", session_key=req.session_key)
        return None
    by_id = {c.memory.id: c for c in pool}
    for rank, memory_id in enumerate(sorted((k for k in scores if k in by_id), key=lambda k: (-float(scores[k]), k)), 1):
        by_id[memory_id].predictor_score = float(scores[memory_id])
        by_id[memory_id].predictor_rank = rank
    rows = [row for row in fused or [] if row.memory_id in by_id]
    return rows or None


def rank_and_select(req: StartRequest, deps: SessionDeps, pool: list[_Scored], ctx: _Ctx,
                    deadline: Deadline) -> tuple[list[_Scored], list[_Scored], bool]:
    """(all candidates in final order, the injected ones in selection order, predictor used)."""
    cfg = deps.settings
    baseline = sorted(pool, key=lambda c: (-c.effective, -(c.similarity or 0.0), c.memory.id))
    for rank, cand in enumerate(baseline, 1):
        cand.baseline_rank = rank
    fused = _predictor_pass(req, deps, pool, ctx, [c.memory.id for c in baseline], deadline)
    by_id = {c.memory.id: c for c in pool}
    if fused:
        seen = set()
        order = []
        for row in fused:
            cand = by_id[row.memory_id]
            cand.final = row.final_score
            cand.source = row.source or "effective"
            order.append(cand)
            seen.add(cand.memory.id)
        order += [c for c in baseline if c.memory.id not in seen]  # fuse may return only the head
        for cand in order[len(seen):]:
            cand.final = 0.0
    else:
        order = baseline
        for cand in order:
            cand.final = cand.effective
    chosen = deps.diversity_select(
        order, limit=cfg.inject_limit, budget_chars=min(cfg.start_budget_chars, cfg.inject_budget_chars),
        threshold=cfg.diversity_threshold, decay=cfg.diversity_decay, floor=cfg.diversity_floor,
    )
    injected = []
    for cand, adjusted in chosen:
        cand.factor = adjusted / cand.final if cand.final else 1.0
        injected.append(cand)
    explored = [c for c in order if c.source == "exploration" and c not in injected]
    if explored and injected:  # the predictor's exploration slot stays injected (scorer seed)
        injected[-1] = explored[0]
    injected_ids = {c.memory.id for c in injected}
    rest = [c for c in order if c.memory.id not in injected_ids]
    return injected + rest, injected, bool(fused)


def _items(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"memory_id": r["memory_id"], "content": r.get("content") or "", "type": r.get("type")} for r in rows]


def replay_existing(deps: SessionDeps, session: dict[str, Any], viewer: Viewer | None = None) -> StartResult | None:
    """The injection already recorded for this session, or None when none was recorded; on a team
    server, less what `viewer` may not see (sessions have no owner: a key sent again by another
    user must not replay someone's personal memories)."""
    rows = store.session_memories(deps.db.reader(), session["session_key"])
    start_rows = [r for r in rows if r.get("prefilter_source")]
    if not start_rows:
        return None
    injected = sorted((r for r in start_rows if r["inject_phase"] == "session-start"), key=lambda r: r["rank"])
    if viewer is not None and not viewer.sees_all:
        found = get_memories(deps.db.reader(), [r["memory_id"] for r in injected])
        injected = [r for r in injected if r["memory_id"] in found and viewer.can_see(found[r["memory_id"]])]
    line = session.get("status_line") or status_line(deps)
    return StartResult(
        inject=session_start_text(_items(injected), line), memory_ids=[r["memory_id"] for r in injected],
        candidates=len(start_rows), status_line=line, created=False,
    )


def session_start(deps: SessionDeps, req: StartRequest, deadline: Deadline) -> StartResult:
    existing = store.get_session(deps.db.reader(), req.session_key)
    if existing is not None:
        replay = replay_existing(deps, existing, req.viewer)
        if replay is not None:
            return replay
    ctx = _Ctx(session_context_text(req, deps))
    pool = prefilter(req, deps, deadline, ctx)
    ordered, injected, used_predictor = rank_and_select(req, deps, pool, ctx, deadline)
    line = status_line(deps)
    inject_now = not deadline.cancelled
    injected_ids = {c.memory.id for c in injected} if inject_now else set()
    rows = [
        {
            "memory_id": c.memory.id, "source": c.source, "prefilter_source": c.prefilter,
            "effective_score": c.effective, "similarity": c.similarity, "predictor_score": c.predictor_score,
            "baseline_rank": c.baseline_rank, "predictor_rank": c.predictor_rank, "final_score": c.final,
            "rank": rank, "diversity_factor": c.factor, "was_injected": c.memory.id in injected_ids,
            "inject_phase": "session-start" if c.memory.id in injected_ids else None,
        }
        for rank, c in enumerate(ordered, 1)
    ]
    with deps.db.with_write_tx() as conn:
        created = store.create_session(
            conn, req.session_key, harness=req.harness, project=req.project, cwd=req.cwd,
            context=req.context, started_at=req.at,
        )
        store.insert_candidates(conn, req.session_key, rows, req.at)
        store.set_status_line(conn, req.session_key, line)
    items = [{"memory_id": c.memory.id, "content": c.memory.content, "type": c.memory.type}
             for c in injected if c.memory.id in injected_ids]
    return StartResult(
        inject=session_start_text(items, line), memory_ids=[i["memory_id"] for i in items],
        candidates=len(rows), status_line=line, created=created, cut=list(deadline.cut),
        predictor_used=used_predictor,
    )
