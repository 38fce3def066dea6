"""session-start: pre-filter → baseline ranking → predictor (seam) → diversity → budget → inject.

Scorer seed "Hook Flow": the pool is the standing-rule candidates (evidence of their own) ∪
effective_score top-k ∪ embedding-similarity top-k against the session context (≤
max_candidates for any corpus size). What may be shown and in which order is decided in
`sessions.ranking` (the one ranking home): the baseline puts standing rules first; when a
predictor is attached and answers, its scores are recorded and fused (`predictor.fuse`);
topic-diversity decay picks the injected ones within the character budget among those
`ranking.showable` allows (team-draft interleaved with the predictor's order once it answers:
`interleave`), and one continuity item for the project's latest session follows. The predictor's
status line is recorded and answered (dashboard, CLI), never injected (issue 32).
**Every candidate** is recorded in session_memories. Injection is not an access: nothing here
touches access_count / last_accessed_at. Re-running for a key returns the recorded injection
without recording anything twice.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Annotated, NotRequired

import numpy as np
from pydantic import Field
from typing_extensions import TypedDict  # pydantic reads it (the hook route's response model) on Python 3.11

from kenning.core.config_sessions import RankingSettings
from kenning.core.events import SessionStarted
from kenning.core.telemetry import record_error
from kenning.core.types import Memory, Viewer
from kenning.predictor import constants as PC
from kenning.predictor.context import Candidate, ScoringContext
from kenning.predictor.fusion import Fused, own_order, unseen_of
from kenning.predictor.interleave import team_draft
from kenning.sessions import ranking
from kenning.sessions.context import Deadline, SessionDeps, run_bounded
from kenning.sessions.inject import InjectItem, item_cost, session_start_text
from kenning.store import sessions as store
from kenning.store.sessions import CandidateRecord, SessionMemoryRow, SessionRow
from kenning.store.memories import get_memories
from kenning.store.vectors import get_embeddings

RESERVE_MS = 60.0  # kept back from optional stages for ranking, recording and rendering


MAX_SOURCE_CHARS = 50


def start_source(event: SessionStarted) -> str:
    """How the session began as the harness says (startup | resume | clear | compact …; the session's metadata):
    the event's `source` when it is a string of 1..MAX_SOURCE_CHARS characters, else 'startup'."""
    source = event.source
    return source if isinstance(source, str) and 0 < len(source) <= MAX_SOURCE_CHARS else "startup"


# The hook route's own answer to a bounded event it gave up on (api/routes/hooks._call): an empty injection, this flag
# and why. Declared in each answer that can carry it (StartAnswer, sessions.prompt.PromptAnswer, hookservice's), last,
# so an answer's keys keep their order.
Degraded = Annotated[bool, Field(description="true: an internal error or the latency budget; empty answer.")]


class StartAnswer(TypedDict):
    """What session start answers — the one declaration (issue 34): SessionManager.session_start returns it, the
    hook route's `response_model` serialises it. `degraded` / `error` are the route's alone (it gave up: an empty
    answer); the engine never sets them."""
    inject: str  # the block the agent gets ('' when nothing)
    memory_ids: list[str]  # the injected memories, in the block's order
    candidates: int  # how many were considered (all recorded in session_memories)
    status_line: str  # the predictor's status, for the user (never injected)
    created: bool  # False: the session existed and its recorded injection was answered again
    cut: list[str]  # optional stages the latency budget cut
    predictor_used: bool
    continuity: str | None  # the line about the project's latest session, when one was added
    degraded: NotRequired[Degraded]
    error: NotRequired[str]


@dataclass
class _Scored:
    memory: Memory
    prefilter: str
    effective: float
    similarity: float | None = None
    vector: np.ndarray | None = None
    baseline_rank: int = 0
    predictor_score: float | None = None
    predictor_rank: int | None = None
    draft_rank: int | None = None  # the predictor's place in the interleaving draft (fusion.own_order)
    final: float = 0.0
    factor: float | None = None
    source: str = "effective"  # which ranker put it here: effective | predictor | both | exploration
    verdict: str = ranking.ELIGIBLE  # sessions.ranking: standing | eligible | raw | demoted | needs_review
    evidence: ranking.Evidence | None = None
    team: str | None = None  # the ranking that contributed it to an interleaved draft (interleave.py)

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
    if predictor is not None:
        try:
            line = predictor.status_line()
            if isinstance(line, str) and line:
                return line
        except Exception as exc:  # the predictor is optional: report and fall back
            record_error("sessions", f"predictor.status_line failed: {exc}")
    scored = store.scored_session_count(deps.db.reader())
    return f"[predictor: off | {scored} sessions scored | baseline only]"


def session_context_text(event: SessionStarted, at: str, deps: SessionDeps) -> str:
    """Project, cwd, caller context and the project's latest checkpoint (before `at`), for similarity."""
    parts = [p for p in (event.project, event.cwd, event.context) if p]
    latest = store.latest_checkpoint(deps.db.reader(), project=event.project, before=at)
    if latest:
        parts.append(latest.content[-1500:])
    return "\n".join(parts)


def prefilter(event: SessionStarted, at: str, viewer: Viewer | None, deps: SessionDeps, deadline: Deadline,
              ctx: _Ctx) -> list[_Scored]:
    """standing candidates ∪ effective_score top-k ∪ similarity top-k as of `at`, capped at max_candidates
    (sets ctx.vector); each candidate carries its ranking verdict. `viewer`: a team server's user (only what
    they may see is offered)."""
    context_text = ctx.text
    cfg = deps.settings
    conn = deps.db.reader()
    standing_ids = ranking.standing_pool(conn, project=event.project, at=at, viewer=viewer,
                                         cfg=cfg.ranking, limit=cfg.prefilter_effective_k)
    effective_ids = store.top_by_effective_score(conn, project=event.project, at=at,
                                                 limit=cfg.prefilter_effective_k, viewer=viewer)
    similar: list[tuple[str, float]] = []
    if context_text and cfg.prefilter_similarity_k:
        try:
            vector = run_bounded(deadline, "similarity", lambda: deps.embedder.embed_query(context_text),
                                 reserve_ms=RESERVE_MS)
            ctx.vector = vector
            if vector is not None:
                similar = store.top_by_similarity(
                    conn, vector, deps.embedder.model_id, project=event.project, at=at,
                    limit=cfg.prefilter_similarity_k, viewer=viewer,
                )
        except Exception as exc:  # similarity is an optional leg: keep the effective_score pool
            record_error("sessions", f"session-start similarity leg failed: {exc}", session_key=event.session_key)
    sim = dict(similar)
    order: list[str] = []
    for memory_id in [*standing_ids, *effective_ids, *(m for m, _ in similar)]:
        if memory_id not in order:
            order.append(memory_id)
    order = order[: cfg.max_candidates]
    memories = get_memories(conn, order)
    judged = ranking.verdicts(conn, list(memories.values()), at, cfg.ranking)
    effective_set = set(effective_ids)
    pool = []
    for memory_id in order:
        memory = memories.get(memory_id)
        if memory is None:
            continue
        path = "both" if memory_id in effective_set and memory_id in sim else (
            "effective" if memory_id in effective_set else ("similarity" if memory_id in sim else "evidence"))
        cand = _Scored(memory, path, deps.effective_score(memory, at), sim.get(memory_id))
        cand.verdict, cand.evidence = judged[memory_id] if memory_id in judged else (ranking.ELIGIBLE, None)
        pool.append(cand)
    vectors = get_embeddings(conn, list({c.memory.content_hash for c in pool}), deps.embedder.model_id)
    for cand in pool:
        cand.vector = vectors.get(cand.memory.content_hash)
    return pool


@dataclass
class _Ctx:
    """The session context as the predictor wants it (text + its embedding when we made one)."""

    text: str
    vector: np.ndarray | None = None


def _predictor_pass(event: SessionStarted, at: str, deps: SessionDeps, pool: list[_Scored], ctx: _Ctx,
                    baseline_ids: list[str], deadline: Deadline) -> list[Fused] | None:
    """Predictor scores → the fused ranking (predictor.fusion.Fused rows), or None (baseline).

    Interface: context.SessionPredictor (score / fuse / status_line / on_session_end).
    """
    predictor = deps.predictor
    if predictor is None or not pool:
        return None
    session_context = ScoringContext(session_key=event.session_key, project=event.project, text=ctx.text,
                                     embedding=ctx.vector, timestamp=at)
    candidates = [Candidate.of(c.memory, c.vector) for c in pool]
    try:
        scores = run_bounded(deadline, "predictor", lambda: predictor.score(session_context, candidates),
                             reserve_ms=RESERVE_MS / 2)
        if not scores:
            return None
        fused = predictor.fuse(baseline_ids, scores, top_k=deps.settings.inject_limit)
    except Exception as exc:  # a failing predictor must never cost the answer
        record_error("sessions", f"predictor failed, baseline used: {exc}", session_key=event.session_key)
        return None
    by_id = {c.memory.id: c for c in pool}
    for rank, memory_id in enumerate(sorted((k for k in scores if k in by_id), key=lambda k: (-float(scores[k]), k)), 1):
        by_id[memory_id].predictor_score = float(scores[memory_id])
        by_id[memory_id].predictor_rank = rank
    # what the interleaving drafts from: the model's order, but an unseen memory keeps the baseline's place
    for rank, memory_id in enumerate((k for k in own_order(scores, baseline_ids, unseen_of(scores)) if k in by_id), 1):
        by_id[memory_id].draft_rank = rank
    rows = [row for row in fused or [] if row.memory_id in by_id]
    return rows or None


def rank_and_select(event: SessionStarted, at: str, deps: SessionDeps, pool: list[_Scored], ctx: _Ctx,
                    deadline: Deadline, reserved: ranking.Continuity | None = None,
                    ) -> tuple[list[_Scored], list[_Scored], bool]:
    """(all candidates in final order, the injected ones in selection order, predictor used).
    `reserved`: the continuity item, whose slot and characters come off the limit and budget."""
    cfg = deps.settings
    baseline = sorted(pool, key=ranking.baseline_key)
    for rank, cand in enumerate(baseline, 1):
        cand.baseline_rank = rank
    fused = _predictor_pass(event, at, deps, pool, ctx, [c.memory.id for c in baseline], deadline)
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
            cand.final = ranking.baseline_score(cand)
    influence = bool(fused) and ranking.predictor_has_influence(deps.predictor)
    allowed = [c for c in order if ranking.showable(c, cfg.ranking, influence)]
    budget = min(cfg.start_budget_chars, cfg.inject_budget_chars) - (reserved.chars if reserved else 0)
    limit = max(0, cfg.inject_limit - (1 if reserved else 0))
    if fused:
        allowed = interleave(event.session_key, order, allowed, cfg.ranking, limit, influence)
    chosen = deps.diversity_select(
        allowed, limit=limit, budget_chars=max(0, budget),  # topic diversity: recall.topic_diversity, bound by the service
    ) if allowed and limit else []
    injected = []
    for cand, adjusted in chosen:
        cand.factor = adjusted / cand.final if cand.final else 1.0
        injected.append(cand)
    explored = [c for c in allowed if c.source == "exploration" and c not in injected]
    if explored and injected:  # the predictor's exploration slot stays injected (scorer seed)
        injected[-1] = explored[0]
    injected_ids = {c.memory.id for c in injected}
    rest = [c for c in order if c.memory.id not in injected_ids]
    return injected + rest, injected, bool(fused)


def interleave(session_key: str, order: list[_Scored], allowed: list[_Scored], cfg: RankingSettings,
               limit: int, influence: bool) -> list[_Scored]:
    """Team-draft interleaving of the baseline's and the predictor's orders (predictor.interleave,
    issue 32), so the predictor's own picks are shown and rated. Both draw only from what could be
    shown once the predictor has influence (`ranking.showable`); while it has none the draft fills
    at most INTERLEAVE_EXTRA_SLOTS places beyond what the baseline alone shows. The drafted come
    first (their `team` set, scores above the rest so diversity selection keeps the order), then the
    rest of `allowed`. The coin is seeded by the session key: the same session drafts the same."""
    open_set = [c for c in order if ranking.showable(c, cfg, True)]
    ranked = sorted((c for c in open_set if c.draft_rank is not None), key=lambda c: c.draft_rank or 0)
    if not ranked or not limit:
        return allowed
    slots = limit if influence else min(limit, len(allowed) + PC.INTERLEAVE_EXTRA_SLOTS)
    baseline = [c.memory.id for c in sorted(open_set, key=lambda c: c.baseline_rank)]
    picks = team_draft(baseline, [c.memory.id for c in ranked], slots, random.Random(f"interleave:{session_key}"))
    by_id = {c.memory.id: c for c in open_set}
    drafted = [by_id[p.memory_id] for p in picks]
    top = max((c.final for c in order), default=0.0)
    for position, (cand, pick) in enumerate(zip(drafted, picks)):
        cand.team = pick.team
        cand.final = top + 1.0 + (len(drafted) - position)
    chosen = {c.memory.id for c in drafted}
    return drafted + [c for c in allowed if c.memory.id not in chosen]


def _items(rows: list[SessionMemoryRow]) -> list[InjectItem]:
    return [{"memory_id": r["memory_id"], "content": r.get("content") or "", "type": r.get("type")} for r in rows]


def replay_existing(deps: SessionDeps, session: SessionRow, viewer: Viewer | None = None) -> StartAnswer | None:
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
    cont = _continuity(deps, session.get("project"), session.get("started_at") or "", session["session_key"], viewer)
    items = [r for r in injected if not (cont is not None and r["memory_id"] == cont.memory_id)
             and r.get("prefilter_source") != CONTINUING]
    carried = [r for r in injected if r.get("prefilter_source") == CONTINUING]
    return {"inject": session_start_text(_items(items), continuity=cont.text if cont else None,
                                         continuing=_items(carried)),
            "memory_ids": [r["memory_id"] for r in injected], "candidates": len(start_rows), "status_line": line,
            "created": False, "cut": [], "predictor_used": False, "continuity": cont.text if cont else None}


CONTINUITY = "continuity"  # prefilter_source of the continuity item's row (its task memory, or none)


def _continuity(deps: SessionDeps, project: str | None, at: str, session_key: str,
                viewer: Viewer | None = None) -> ranking.Continuity | None:
    try:
        return ranking.continuity_item(deps.db.reader(), project=project, at=at, session_key=session_key,
                                       cfg=deps.settings.ranking, viewer=viewer)
    except Exception as exc:  # continuity is one optional slot: never costs the answer
        record_error("sessions", f"continuity item failed: {exc}", session_key=session_key)
        return None


def session_start(deps: SessionDeps, event: SessionStarted, at: str, viewer: Viewer | None,
                  deadline: Deadline) -> StartAnswer:
    """The session's start: the typed event as the hook route read it, `at` its time (the daemon's clock when the
    event has none: context.resolve_at), `viewer` a team server's user (only what they may see is offered)."""
    key = event.session_key
    existing = store.get_session(deps.db.reader(), key)
    if existing is not None:
        replay = replay_existing(deps, existing, viewer)
        if replay is not None:  # a resumed / compacted session starts again: the injection it had, answered again
            with deps.db.with_write_tx() as conn:
                store.note_start(conn, key, start_source(event))
            return replay
    ctx = _Ctx(session_context_text(event, at, deps))
    pool = prefilter(event, at, viewer, deps, deadline, ctx)
    cont = _continuity(deps, event.project, at, key, viewer)
    ordered, injected, used_predictor = rank_and_select(event, at, deps, pool, ctx, deadline, reserved=cont)
    line = status_line(deps)
    inject_now = not deadline.cancelled
    injected_ids = {c.memory.id for c in injected} if inject_now else set()
    if not inject_now:
        cont = None
    rows: list[CandidateRecord] = [
        {
            "memory_id": c.memory.id, "source": c.source, "prefilter_source": c.prefilter,
            "effective_score": c.effective, "similarity": c.similarity, "predictor_score": c.predictor_score,
            "baseline_rank": c.baseline_rank, "predictor_rank": c.predictor_rank, "final_score": c.final,
            "rank": rank, "diversity_factor": c.factor, "was_injected": c.memory.id in injected_ids,
            "inject_phase": "session-start" if c.memory.id in injected_ids else None,
            "team": c.team if c.memory.id in injected_ids else None,
        }
        for rank, c in enumerate(ordered, 1)
    ]
    rows += _continuity_rows(cont, rows, at)
    going = _continuing(deps, event, at, viewer, injected_ids, cont) if inject_now else []
    rows += _continuing_rows(going, rows)
    with deps.db.with_write_tx() as conn:
        created = store.create_session(
            conn, key, harness=event.harness.value, project=event.project, cwd=event.cwd,
            context=event.context, started_at=at,
        )
        store.note_start(conn, key, start_source(event))
        store.insert_candidates(conn, key, rows, at)
        store.set_status_line(conn, key, line)
    items: list[InjectItem] = [{"memory_id": c.memory.id, "content": c.memory.content, "type": c.memory.type}
             for c in injected if c.memory.id in injected_ids and not (cont and c.memory.id == cont.memory_id)]
    carried: list[InjectItem] = [{"memory_id": m.id, "content": m.content, "type": m.type} for m in going]
    ids = ([i["memory_id"] for i in items] + [m.id for m in going]
           + ([cont.memory_id] if cont and cont.memory_id else []))
    return {"inject": session_start_text(items, continuity=cont.text if cont else None, continuing=carried),
            "memory_ids": ids, "candidates": len(rows), "status_line": line, "created": created,
            "cut": list(deadline.cut), "predictor_used": used_predictor, "continuity": cont.text if cont else None}


CONTINUING = "continuing"  # prefilter_source of a row the task in progress carried into session start


def _continuing(deps: SessionDeps, event: SessionStarted, at: str, viewer: Viewer | None, shown: set[str],
                cont: ranking.Continuity | None) -> list[Memory]:
    """The task in progress (`ranking.continuing`) less what session start shows already, within what is
    left of the start budget (at least half of it: the task matters more than one more standing rule)."""
    cfg = deps.settings
    try:
        going = ranking.continuing(deps.db.reader(), project=event.project, at=at, session_key=event.session_key,
                                   cfg=cfg.ranking, viewer=viewer)
    except Exception as exc:  # the group is optional: never costs the answer
        record_error("sessions", f"continuing group failed: {exc}", session_key=event.session_key)
        return []
    found = get_memories(deps.db.reader(), list(shown))
    budget = max(cfg.start_budget_chars // 2, cfg.start_budget_chars - sum(item_cost(m.content) for m in found.values())
                 - (cont.chars if cont else 0))
    out: list[Memory] = []
    for memory in going:
        if memory.id in shown or (cont is not None and memory.id == cont.memory_id):
            continue
        cost = item_cost(memory.content)
        if cost > budget:
            break
        budget -= cost
        out.append(memory)
    return out


def _continuing_rows(going: list[Memory], rows: list[CandidateRecord]) -> list[CandidateRecord]:
    """The continuing group's rows: injected at session start, on the candidate row when the pool has it."""
    by_id = {row["memory_id"]: row for row in rows}
    extra: list[CandidateRecord] = []
    for memory in going:
        row = by_id.get(memory.id)
        if row is not None:
            row["was_injected"], row["inject_phase"], row["prefilter_source"] = True, "session-start", CONTINUING
            continue
        rank = len(rows) + len(extra) + 1
        extra.append({"memory_id": memory.id, "source": "effective", "prefilter_source": CONTINUING,
                      "effective_score": None, "similarity": None, "predictor_score": None, "baseline_rank": rank,
                      "predictor_rank": None, "final_score": 0.0, "rank": rank, "diversity_factor": None,
                      "was_injected": True, "inject_phase": "session-start"})
    return extra


def _continuity_rows(cont: ranking.Continuity | None, rows: list[CandidateRecord], at: str) -> list[CandidateRecord]:
    """The continuity item's row when it is a memory (the session's task, type work_state): injected,
    on its candidate row when the pool has it. An item built from the session's prompt and
    transcript names no memory and has no row (a replay builds it again)."""
    if cont is None or not cont.memory_id:
        return []
    for row in rows:
        if row["memory_id"] == cont.memory_id:
            row["was_injected"], row["inject_phase"], row["prefilter_source"] = True, "session-start", CONTINUITY
            return []
    return [{"memory_id": cont.memory_id, "source": "effective", "prefilter_source": CONTINUITY,
             "effective_score": None, "similarity": None, "predictor_score": None, "baseline_rank": len(rows) + 1,
             "predictor_rank": None, "final_score": 0.0, "rank": len(rows) + 1, "diversity_factor": None,
             "was_injected": True, "inject_phase": "session-start"}]
