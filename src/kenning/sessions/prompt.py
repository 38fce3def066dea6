"""user-prompt-submit: per-prompt recall, FTS hit tracking, agent feedback, checkpoints.

Scorer seed "User-Prompt-Submit Integration": every FTS match increments `fts_hit_count`
on its session_memories row; matches outside the pool get a `fts_only` row. The prompt's
recall (the service's hybrid recall over the project's and global memories, without access
tracking: injection is not an access) injects what this session has not been shown yet: a query
found it, so raw episodes and commits may come in here, but not memories waiting for review
(`ranking.awaiting_review`: only the user makes a rule, issue 33). Which hits are
worth it, and in which order, is the prompt bar (`sessions.prompt_bar`, issue 32): each candidate's
calibrated probability of being needed, nothing below `ranking.prompt_min_probability`, no near-copy of
what the session was shown, no raw exchange a distilled memory covers; on a precise first prompt (a bug
report) also the smallest top of the pool likely to hold what is needed (`prompt_bar.top_set`); every
candidate is recorded with its probability and features (`prompt_candidates`). The
first prompt is where the task is finally known, so it gets a full-size injection: up to
`inject_limit`, within what session-start left of the opening budget `inject_budget_chars`
(session-start uses at most `start_budget_chars` of it; the first prompt gets at least
`prompt_budget_chars`), in recall order; when the predictor serves, the pool is scored with the
prompt as context and recorded as phase 'prompt:1' for training (`prompt_rank`), and injected in
its fused order only with `sessions.prompt_predictor_order` (its alpha is earned on session-start
pools, not on prompt pools: in the fused order the coding-memory bench injected fewer decisions); otherwise
the slots are team-draft interleaved from recall's order and the predictor's own (issue 32,
`prompt_rank.interleave_pool`), within what passed the prompt bar, so its picks are rated too; merged with what
session-start showed: a recalled memory session-start already showed takes its place in the
merged set (counted in the limit, not repeated). Later prompts get up to `prompt_inject_limit`
new ones.
The agent is asked to rate exactly the ids of that answer: the ones it shows, and on the first
prompt the merged session-start ones (agent-relevance-feedback seed). Feedback is a running mean in −1..1; ids the
session never saw and non-numeric or out-of-range scores are ignored, never an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NotRequired

from typing_extensions import TypedDict  # pydantic reads it (the hook route's response model) on Python 3.11

from kenning.core.telemetry import record_error
from kenning.core.types import Memory, MemoryFilter, Viewer
from kenning.sessions.checkpoints import maybe_checkpoint
from kenning.sessions.context import Deadline, Hit, Recalled, SessionDeps, bare_session, run_bounded
from kenning.sessions.inject import InjectItem, item_cost, prompt_text
from kenning.sessions.mcp_clients import McpClients
from kenning.sessions.prompt_rank import PHASE, interleave_pool, rank_prompt_pool
from kenning.sessions.start import Degraded
from kenning.sessions import prompt_bar, ranking
from kenning.core.secrets import redact
from kenning.store import sessions as store
from kenning.store.sessions import CandidateRecord, SessionRow
from kenning.store.memories import get_memories
from kenning.store.predictor import record_pool
from kenning.store.prompt_candidates import record as record_candidates
from kenning.store.ranking import rated_in_session
from kenning.store.search import bm25_search
from kenning.store.vectors import get_embeddings

FTS_LIMIT = 20
RESERVE_MS = 50.0  # kept back from recall for recording, checkpoints and rendering
MAX_FEEDBACK_IDS = 30


@dataclass
class PromptRequest:
    session_key: str
    prompt: str
    memory_feedback: object = None  # the caller's JSON value: {memory id: score}, cleaned by clean_feedback
    at: str = ""
    viewer: Viewer | None = None  # a team server's user: only what they may see is offered
    mcp: McpClients | None = None  # where kenning's MCP server is connected (the rating request's channel)
    # what the hook knows of the session, used only when the prompt arrives before session start (Copilot CLI
    # runs both hooks at once): the row it makes then is scoped to the project from the first prompt on
    harness: str | None = None
    project: str | None = None
    cwd: str | None = None


class PromptAnswer(TypedDict):
    """What a prompt answers — the one declaration (issue 34): user_prompt_submit builds it, the manager and the
    hooks service return it, the hook route's `response_model` serialises it. `degraded` / `error` are the route's
    alone (it gave up: an empty answer)."""
    inject: str  # the block the agent gets ('' when nothing)
    memory_ids: list[str]  # the injected memories, in the block's order
    fts_hits: int  # FTS matches among the memories the session already had
    fts_only: int  # FTS matches recorded as new `fts_only` rows
    feedback_applied: int
    feedback_ignored: int
    checkpoint_id: NotRequired[int]  # the interval checkpoint taken (absent: none was due)
    cut: list[str]  # optional stages the latency budget cut
    degraded: NotRequired[Degraded]
    error: NotRequired[str]


def clean_feedback(raw: object) -> tuple[dict[str, float], int]:
    """(valid scores, how many entries were ignored). Accepts only {str: number in [-1, 1]}."""
    if not isinstance(raw, dict):
        return {}, 0 if raw is None else 1
    valid: dict[str, float] = {}
    ignored = 0
    for key, value in raw.items():
        if (isinstance(key, str) and isinstance(value, (int, float)) and not isinstance(value, bool)
                and math.isfinite(value) and -1.0 <= value <= 1.0):
            valid[key] = float(value)
        else:
            ignored += 1
    return valid, ignored


def apply_feedback(deps: SessionDeps, session_key: str, raw: object, *, shown_only: bool = False) -> tuple[int, int]:
    """Fold agent feedback into the session's rows (`shown_only`: injected rows only, a team
    server's users); (applied, ignored). Fail-open."""
    scores, ignored = clean_feedback(raw)
    if not scores:
        return 0, ignored
    try:
        with deps.db.with_write_tx() as conn:
            owned = store.session_owner(conn, session_key)[1] is not None  # a team server's session
            applied = store.apply_feedback(conn, session_key, scores, shown_only=shown_only or owned)
    except Exception as exc:  # feedback is best-effort by design (fail-open)
        record_error("sessions", f"feedback not stored: {exc}", session_key=session_key)
        return 0, ignored + len(scores)
    return len(applied), ignored + len(scores) - len(applied)


def ensure_session(deps: SessionDeps, session_key: str, at: str, *, harness: str | None = None,
                   project: str | None = None, cwd: str | None = None) -> SessionRow:
    """The session row; created when a prompt arrives before (or without) session-start, with what the
    prompt knows of it (nothing, for most harnesses)."""
    session = store.get_session(deps.db.reader(), session_key)
    if session is None:
        with deps.db.with_write_tx() as conn:
            store.create_session(conn, session_key, harness=harness, project=project, cwd=cwd, context=None,
                                 started_at=at)
        session = store.get_session(deps.db.reader(), session_key) or bare_session(session_key, at)
    return session


def user_prompt_submit(deps: SessionDeps, req: PromptRequest, deadline: Deadline) -> PromptAnswer:
    cfg = deps.settings
    session = ensure_session(deps, req.session_key, req.at, harness=req.harness, project=req.project, cwd=req.cwd)
    team_user = req.viewer is not None and not req.viewer.sees_all
    applied, ignored = (apply_feedback(deps, req.session_key, req.memory_feedback, shown_only=team_user)
                        if cfg.agent_feedback else (0, 0))
    filters = MemoryFilter(project=session.get("project"), include_global=True, until=req.at, viewer=req.viewer)
    conn = deps.db.reader()
    first = int(session.get("prompt_count") or 0) == 0
    limit = cfg.inject_limit if first else cfg.prompt_inject_limit
    budget = cfg.prompt_budget_chars
    used = 0
    if first:  # session-start and the first prompt share the opening budget; one read serves both
        rows = store.session_memories(conn, req.session_key)
        state = {r["memory_id"]: bool(r["was_injected"]) for r in rows}
        used = sum(item_cost(r.get("content") or "") for r in rows if r.get("inject_phase") == "session-start")
        budget = max(cfg.inject_budget_chars, used + cfg.prompt_budget_chars)
    else:
        state = store.session_memory_state(conn, req.session_key)
    recalled: Recalled | None = None
    if limit:
        try:
            recalled = run_bounded(
                deadline, "recall", lambda: deps.recall(req.prompt, limit=limit * 3, filters=filters),
                reserve_ms=RESERVE_MS,
            )
        except Exception as exc:  # recall failing costs this prompt's hybrid ranking, nothing else
            record_error("sessions", f"prompt recall failed: {exc}", session_key=req.session_key)
    # the prompt's FTS matches are what recall's BM25 leg found (one query); searched here only without it
    matches = recalled.bm25_matches if recalled is not None else None
    fts = matches[:FTS_LIMIT] if matches is not None else bm25_search(conn, req.prompt, filters, FTS_LIMIT)
    fts_ids = [m for m, _ in fts]
    fts_in_pool = [m for m in fts_ids if m in state]
    fts_outside = [m for m in fts_ids if m not in state]
    hits: list[Hit]
    if recalled is None:  # recall cut or failed: fall back to the FTS matches, best first
        found = get_memories(conn, fts_ids)
        hits = [_Hit(found[m], score, {"bm25": {"score": score}}) for m, score in fts if m in found]
    else:
        hits = list(recalled)

    # already shown (and counted): part of the merged set on the first prompt; the rest face the prompt bar
    merged = [h.memory.id for h in hits if state.get(h.memory.id)][:limit] if first else []
    fresh = [h for h in hits if not state.get(h.memory.id)]
    held = ranking.awaiting_review(conn, [h.memory for h in fresh], session.get("started_at") or req.at, cfg.ranking)
    assessed = _assess(deps, session, req, [h for h in fresh if h.memory.id not in held], state, first)
    bug_report = first and prompt_bar.precise(req.prompt)  # judged as a set too (prompt_bar.top_set)
    # the set fills what session start left of its room: the opening (start + first prompt) stays small
    selected = prompt_bar.select(assessed, cfg.ranking, precise_first=bug_report,
                                 set_room=max(0, cfg.ranking.prompt_set_budget_chars - used))
    text_of = {a.hit.memory.id: prompt_bar.shown_text(a, cfg.ranking) for a in selected}
    hits = [a.hit for a in selected]
    pool_ranking = None
    teams: dict[str, str] = {}  # interleaving: memory id → the ranking that contributed it
    if first and hits:  # the task is known now: the predictor ranks this pool with the prompt as context
        pool_ranking = rank_prompt_pool(deps, session, req.prompt, [h.memory for h in hits], deadline)
        by_id = {h.memory.id: h for h in hits}
        if pool_ranking is not None and cfg.prompt_predictor_order:
            hits = [by_id[m] for m in pool_ranking.order if m in by_id]
        elif pool_ranking is not None:  # team draft within what passed the bar: the predictor's picks are seen
            order, teams = interleave_pool(list(by_id), pool_ranking, max(0, limit - len(merged)), req.session_key)
            hits = [by_id[m] for m in order]
    chosen: list[Hit] = []
    for hit in hits:
        if len(chosen) + len(merged) >= limit:
            break
        cost = item_cost(text_of.get(hit.memory.id, hit.memory.content))
        if used + cost <= budget:
            chosen.append(hit)
            used += cost
    if deadline.cancelled:
        chosen = []
    chosen_ids = [h.memory.id for h in chosen]
    base_rank = store.max_rank(conn, req.session_key)
    fts_score = dict(fts)
    new_rows: list[CandidateRecord] = []
    for offset, memory_id in enumerate(dict.fromkeys([*fts_outside, *(m for m in chosen_ids if m not in state)]), 1):
        injected = memory_id in chosen_ids
        hit_score = next((h.score for h in chosen if h.memory.id == memory_id), None)
        new_rows.append({
            "memory_id": memory_id, "source": "fts_only" if memory_id in fts_score else "prompt",
            "final_score": float(hit_score if hit_score is not None else fts_score.get(memory_id, 0.0)),
            "rank": base_rank + offset, "was_injected": injected,
            "inject_phase": f"prompt:{int(session.get('prompt_count') or 0) + 1}" if injected else None,
            "fts_hit_count": 1 if memory_id in fts_score else 0,
            "team": teams.get(memory_id) if injected else None,
        })
    with deps.db.with_write_tx() as wconn:
        updated = store.note_prompt(wconn, req.session_key, req.at)
        count = updated.get("prompt_count")
        index = count if isinstance(count, int) and count else 1
        store.increment_fts_hits(wconn, req.session_key, fts_in_pool)
        store.insert_candidates(wconn, req.session_key, new_rows, req.at)
        # every pick is marked shown, not only those `state` held: a session start that ran at once (Copilot CLI
        # runs both hooks together) may have recorded one as a candidate since, and the INSERT left that row alone
        store.mark_injected(wconn, req.session_key, chosen_ids, req.at, f"prompt:{index}")
        store.set_teams(wconn, req.session_key, {m: teams[m] for m in chosen_ids if m in teams})
        store.add_prompt(wconn, req.session_key, index, redact(req.prompt)[:20_000],
                         fts_hits=len(fts_ids), injected=chosen_ids, at=req.at)
        if pool_ranking is not None:
            record_pool(wconn, req.session_key, PHASE, pool_ranking.rows, req.at)
        shown_now = set(chosen_ids)
        record_candidates(wconn, req.session_key, index, [
            {"memory_id": a.hit.memory.id, "recall_rank": a.rank, "probability": round(a.probability, 6),
             "features": {**{k: round(v, 6) for k, v in a.features.items()},
                          **({"set_probability": a.set_probability} if a.set_probability is not None else {})},
             "shown": a.hit.memory.id in shown_now}
            for a in assessed], req.at)
    checkpoint_id = None
    if deadline.allows("checkpoint", 5.0):
        checkpoint_id = maybe_checkpoint(deps, req.session_key, req.at, trigger="interval")
    feedback_ids = [*chosen_ids, *merged][:MAX_FEEDBACK_IDS] if cfg.agent_feedback else []
    items: list[InjectItem] = [{"memory_id": h.memory.id, "content": text_of.get(h.memory.id, h.memory.content),
                                "type": h.memory.type} for h in chosen]
    answer: PromptAnswer = {
        "inject": prompt_text(items, feedback_ids,
                              rate_with_tool=req.mcp is not None and req.mcp.connected(session.get("cwd"))),
        "memory_ids": chosen_ids, "fts_hits": len(fts_in_pool),
        "fts_only": len(fts_outside), "feedback_applied": applied, "feedback_ignored": ignored,
        "cut": list(deadline.cut),
    }
    if checkpoint_id is not None:
        answer["checkpoint_id"] = checkpoint_id
    return answer


def _assess(deps: SessionDeps, session: SessionRow, req: PromptRequest, hits: list[Hit], state: dict[str, bool],
            first: bool) -> list[prompt_bar.Assessed]:
    """The prompt bar's view of the fresh hits (`sessions.prompt_bar`): what this session showed and
    used so far, the task in progress, the embeddings of both."""
    if not hits:
        return []
    conn = deps.db.reader()
    rank_cfg = deps.settings.ranking
    shown_ids = [m for m, injected in state.items() if injected]
    shown = list(get_memories(conn, shown_ids).values())
    used = {m for m, score in rated_in_session(conn, req.session_key).items() if score >= rank_cfg.useful_rating}
    continuing = {m.id for m in ranking.continuing(conn, project=session.get("project"), at=session.get("started_at") or req.at,
                                                    session_key=req.session_key, cfg=rank_cfg, viewer=req.viewer)}
    hashes = list({m.content_hash for m in [*shown, *(h.memory for h in hits)]})
    vectors = get_embeddings(conn, hashes, deps.embedder.model_id)
    # the code the session has been about, for a later prompt: its earlier prompts' and what the agent rated useful
    # in it. At the first prompt it has been about nothing yet: what session start showed is kenning's guess (a
    # "new task: …" opener left the continuing group's code behind: task_sim seed 11 held 22 needed notes by it)
    session_code = frozenset() if first else prompt_bar.session_code_names(
        [p["prompt"] for p in store.session_prompts(conn, req.session_key)], [m for m in shown if m.id in used])
    return prompt_bar.assess(
        conn, hits, vectors=vectors, shown=shown, used=used, continuing=continuing, prompt=req.prompt, first=first,
        project=session.get("project"), at=session.get("started_at") or req.at, cfg=rank_cfg,
        is_raw=lambda m: ranking.is_raw(m, rank_cfg), session_code=session_code,
    )


@dataclass
class _Hit:
    """An FTS match standing in for a recall hit (context.Hit) when recall was cut or failed."""
    memory: Memory
    score: float
    legs: dict[str, dict[str, float]]


