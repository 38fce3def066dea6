"""One ranking home: what kenning shows an agent unasked, and in which order (issue 22).

Session start (`sessions.start`), the first prompt (`sessions.prompt`) and step injection
(`observer.decider`) ask this module; its knobs are the one config section `sessions.ranking`.

A memory shown unasked is a claim, so it must carry evidence of its own. Each memory gets a
**verdict** from what is recorded about it (`evidence`):
- `raw`: an exchange, a commit, a session's task (types `ranking.raw_types`, sources
  `ranking.raw_sources`): a query finds it (prompts, MCP), session start and steps never show it;
- `demoted`: the agent rated it at or below `low_rating` in `low_sessions_to_leave` sessions where
  session start showed it, since the last evidence that it belongs there (a useful rating where
  session start showed it, a review — accept or edit —, a pin): it leaves session start until
  such evidence supports it again. Ratings count per phase: a rating where a query found the
  memory (a prompt, a step) says whether it helped when asked, not whether it should open
  sessions, so neither a useful nor a low one moves it in or out of that count (a topic memory
  rated useful whenever its topic is asked about, and down at every session start about another
  topic, stays out of session start);
- `rejected`: the user rejected it in review (kept; a query still finds it);
- `stale`: an area rule whose code (file, symbol) was deleted or renamed (`memories.stale_at`, issue 31):
  held from every unasked injection until the user confirms, edits or retires it in review;
- `needs_review`: learned below the confidence gate, not yet accepted (review) nor rated
  useful where a query found it: not shown unasked;
- `standing`: pinned, user-verified, at least `standing_min_confidence`, or rated useful
  (`useful_rating`) in a session (confirmed by use, wherever it was shown) **when the user stands
  behind it** (`user_word`: the user's own words — a claim the user said, `kenning remember` — or a
  review accept / edit). Agent ratings alone never make a memory standing (issue 33): an assistant's
  recap or an agent's own note the agent then rates useful stays eligible (or in review);
- `eligible`: anything else: shown unasked only when the predictor ranks it there.

Scope (issue 31): a rule carries where it applies (`memories.applies`): `project` (holds everywhere in
the project) or `area` (one file, symbol, module, command or topic; `memories.area`, code links in
`related_files`). Only what `opens_sessions` allows takes a session-start slot: project-scope rules and
what the user pinned or verified; an area rule reaches the agent when its area comes up (a prompt whose
query finds it, a step on a linked file, MCP); a rule whose scope was never told stays out of start.

Session start: the baseline order is standing rules (pinned / verified, then rated useful,
then confident; each by effective score), then the eligible, then the held; one compact
**continuity** item for the project's latest earlier session (its task and outcome in one slot)
follows the standing rules; the predictor fuses over that baseline as before, and the slots
left are filled in its fused order only once it has earned influence (alpha < 1). Before that
they stay empty: empty slots are better than noise. Every candidate is still recorded
(session_memories) with its baseline and predictor ranks, so the predictor keeps learning and
comparing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kenning.core.config_sessions import RankingSettings
from kenning.core.telemetry import record_error
from kenning.core.types import Memory, Viewer
from kenning.sessions.context import Hit, SessionPredictor
from kenning.sessions.inject import item_cost
from kenning.sessions.transcript import last_assistant_text
from kenning.store import ranking as store
from kenning.store.memories import get_memories
from kenning.store.backend import Connection

STANDING, ELIGIBLE = "standing", "eligible"
HELD = ("raw", "rejected", "demoted", "needs_review", "stale")
_TIER = {STANDING: 0, ELIGIBLE: 1, "needs_review": 2, "demoted": 2, "rejected": 3, "raw": 3, "stale": 3}
PROJECT, AREA = "project", "area"  # memories.applies


@dataclass(frozen=True)
class Evidence:
    pinned: bool
    verified: bool
    confidence: float
    needs_review: bool
    raw: bool
    useful_sessions: int  # sessions rating it useful (any phase: confirmed by use)
    low_sessions: int  # sessions rating it low at session start since the last start evidence (useful there, review)
    demoted: bool
    rejected: bool = False  # the user rejected it in review (kept, never shown unasked)
    useful_at_start: int = 0  # sessions rating it useful where session start showed it
    applies: str | None = None  # memories.applies: 'project' | 'area' | None (not told)
    stale: bool = False  # memories.stale_at is set: its code was deleted or renamed
    user_word: bool = False  # the user stands behind it: their own words (claim speaker, the CLI) or a review accept

    @property
    def strength(self) -> int:
        """0 = the user's word (pinned, verified), 1 = the user's words rated useful, 2 = confidence only."""
        return 0 if self.pinned or self.verified else (1 if self.useful_sessions and self.user_word else 2)


class Ranked(Protocol):
    """A session-start candidate as the baseline orders it (start._Scored)."""
    @property
    def memory(self) -> Memory: ...
    @property
    def verdict(self) -> str: ...
    @property
    def evidence(self) -> Evidence | None: ...
    @property
    def effective(self) -> float: ...
    @property
    def similarity(self) -> float | None: ...


def is_raw(memory: Memory, cfg: RankingSettings) -> bool:
    return memory.type in cfg.raw_types or (memory.source or "") in cfg.raw_sources


USER_SOURCES = frozenset({"cli"})  # memories.source of a write the user typed (`kenning remember`)
_REVIEW_ACCEPTED = ("accepted", "edited")


def user_word(memory: Memory) -> bool:
    """Does the user stand behind this memory (issue 33)? Their own words (a claim whose speaker is
    the user, a `kenning remember`) or their review (accept, edit). The agent's ratings, an
    assistant recap, an MCP note or a summary are not."""
    meta = memory.metadata or {}
    claim = meta.get("claim")
    review = meta.get("review")
    return ((memory.source or "") in USER_SOURCES
            or (isinstance(claim, dict) and claim.get("speaker") == "user")
            or (isinstance(review, dict) and review.get("status") in _REVIEW_ACCEPTED))


def evidence(conn: Connection, memories: Sequence[Memory], at: str | None, cfg: RankingSettings) -> dict[str, Evidence]:
    """Evidence per memory as of `at` (ratings of sessions that started before it). The count against
    a memory holds low ratings where session start showed it, and starts again only on evidence that it
    belongs there: a useful rating at session start, or a review (accept / edit; `metadata.reviewed_at`).
    Every useful rating, wherever it was shown, counts as confirmed by use (`useful_sessions`)."""
    history = store.rating_history(conn, [m.id for m in memories], at)
    out: dict[str, Evidence] = {}
    for memory in memories:
        meta = memory.metadata or {}
        reviewed = str(meta.get("reviewed_at") or "")
        review = found if isinstance(found := meta.get("review"), dict) else {}
        useful = low = at_start = 0
        for started_at, score, shown_at_start in history.get(memory.id, ()):
            if score >= cfg.useful_rating:
                useful += 1
                if shown_at_start:  # new evidence for session start: the count against it starts again
                    at_start, low = at_start + 1, 0
            elif score <= cfg.low_rating and shown_at_start and started_at > reviewed:
                low += 1
        demoted = low >= cfg.low_sessions_to_leave and not memory.pinned
        out[memory.id] = Evidence(
            pinned=bool(memory.pinned), verified=bool(memory.user_verified), confidence=float(memory.confidence),
            needs_review=bool(memory.needs_review), raw=is_raw(memory, cfg), useful_sessions=useful,
            low_sessions=low, demoted=demoted, rejected=review.get("status") == "rejected", useful_at_start=at_start,
            applies=memory.applies, stale=bool(memory.stale_at), user_word=user_word(memory),
        )
    return out


def verdict(ev: Evidence, cfg: RankingSettings) -> str:
    if ev.raw:
        return "raw"
    if ev.rejected:
        return "rejected"
    if ev.stale and not ev.pinned:
        return "stale"
    if ev.pinned:
        return STANDING
    if ev.demoted:
        return "demoted"
    if ev.verified:
        return STANDING
    rated = bool(ev.useful_sessions) and ev.user_word  # the agent's ratings count only for what the user said
    if ev.needs_review and not rated:
        return "needs_review"
    if rated or ev.confidence >= cfg.standing_min_confidence:
        return STANDING
    return ELIGIBLE


def verdicts(conn: Connection, memories: Sequence[Memory], at: str | None,
             cfg: RankingSettings) -> dict[str, tuple[str, Evidence]]:
    evs = evidence(conn, memories, at, cfg)
    return {m: (verdict(ev, cfg), ev) for m, ev in evs.items()}


# -- session start -----------------------------------------------------------------------------
def standing_pool(conn: Connection, *, project: str | None, at: str, viewer: Viewer | None, cfg: RankingSettings,
                  limit: int) -> list[str]:
    """The standing-rule candidates session start adds to its pool (the evidence leg)."""
    return store.standing_candidates(
        conn, project=project, at=at, viewer=viewer, min_confidence=cfg.standing_min_confidence,
        useful_rating=cfg.useful_rating, raw_types=cfg.raw_types, raw_sources=cfg.raw_sources, limit=limit,
    )


def baseline_key(cand: Ranked) -> tuple[int, int, float, float, str]:
    """Sort key of the session-start baseline: standing rules (by strength, then effective
    score), then the eligible, then the held; candidates carry .verdict, .evidence, .effective,
    .similarity, .memory."""
    strength = cand.evidence.strength if cand.verdict == STANDING and cand.evidence is not None else 0
    return (_TIER[cand.verdict], strength, -cand.effective, -(cand.similarity or 0.0), cand.memory.id)


def baseline_score(cand: Ranked) -> float:
    """A score in the baseline's order (what diversity selection compares): standing rules by
    strength (3 + effective for the user's word, 2 + for rated useful, 1 + for confident),
    everything else below them at half its effective score."""
    if cand.verdict == STANDING:
        return 3 - cand.evidence.strength + cand.effective if cand.evidence is not None else 1 + cand.effective
    return cand.effective / 2


def predictor_has_influence(predictor: SessionPredictor | None) -> bool:
    """True once the predictor's fused order may fill slots: its alpha (the baseline's weight)
    is below 1."""
    if predictor is None:
        return True
    try:
        return predictor.alpha() < 1.0 - 1e-9
    except Exception as exc:  # the predictor is optional: no influence when it cannot say
        record_error("sessions", f"predictor.alpha failed: {exc}")
        return False


def opens_sessions(ev: Evidence | None) -> bool:
    """May this memory open a session at all (issue 31)? Project-scope rules and what the user pinned
    or verified; an area rule or one whose scope was never told waits until its area comes up."""
    if ev is None:
        return False
    return ev.pinned or ev.verified or ev.applies == PROJECT


def showable(cand: Ranked, cfg: RankingSettings, influence: bool) -> bool:
    """May this session-start candidate take a slot? Only what may open a session at all (`opens_sessions`:
    project scope, pinned, verified), then standing rules, and the eligible once the predictor has influence."""
    if not opens_sessions(cand.evidence):
        return False
    if cand.verdict == STANDING:
        return True
    return cand.verdict == ELIGIBLE and influence and cfg.predictor_fill


@dataclass(frozen=True)
class Continuity:
    session_key: str
    text: str
    memory_id: str | None = None  # the session's task memory when it has one (type work_state)

    @property
    def chars(self) -> int:
        return item_cost(self.text)


def _one_line(text: str | None, limit: int) -> str:
    line = " ".join((text or "").split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def continuity_item(conn: Connection, *, project: str | None, at: str, session_key: str,
                    cfg: RankingSettings, viewer: Viewer | None = None) -> Continuity | None:
    """One compact item for the project's latest earlier session: its task and its outcome. On a
    team server (`viewer` not seeing all) only that user's own sessions count."""
    if not cfg.continuity:
        return None
    owner = viewer.user if viewer is not None and not viewer.sees_all else None
    latest = store.latest_session(conn, project=project, before=at, exclude=session_key, owner=owner)
    if latest is None:
        return None
    half = max(40, cfg.continuity_max_chars // 2 - 40)
    work = latest.get("work_state")
    task = _one_line((work["content"] if work else None) or latest.get("first_prompt") or latest.get("context"), half)
    outcome = _one_line(last_assistant_text(latest.get("transcript_tail") or ""), half)
    if not task and not outcome:
        return None
    when = str(latest.get("started_at") or "")[:10]
    harness = latest.get("harness")
    head = f"Last session in this project ({when}{', ' + harness if harness else ''})"
    parts = [f"task: {task}" if task else "", f"outcome: {outcome}" if outcome else ""]
    text = f"{head}: " + "; ".join(p for p in parts if p)
    return Continuity(latest["session_key"], _one_line(text, cfg.continuity_max_chars), work["id"] if work else None)


def continuing(conn: Connection, *, project: str | None, at: str, session_key: str, cfg: RankingSettings,
               viewer: Viewer | None = None) -> list[Memory]:
    """The task in progress (issue 32): what the agent rated useful (at least `useful_rating`) in the project's
    latest earlier session, best rated first, at most `continuing_limit`. Scope does not hold them back (an
    area rule used in this task belongs to it); raw kinds, rejected and stale memories, the deleted and the
    superseded do, and so do claims waiting for review (issue 33). The task changing lets them go: the session on another task rates them low or not at all,
    and the next one no longer sees them. On a team server only the viewer's own sessions count."""
    if not cfg.continuing_limit:
        return []
    owner = viewer.user if viewer is not None and not viewer.sees_all else None
    latest = store.latest_session(conn, project=project, before=at, exclude=session_key, owner=owner)
    if latest is None:
        return []
    rated = store.rated_in_session(conn, latest["session_key"])
    ids = sorted((m for m, s in rated.items() if s >= cfg.useful_rating), key=lambda m: (-rated[m], m))
    found = get_memories(conn, ids)
    live = [found[m] for m in ids if m in found and not found[m].is_deleted and not found[m].superseded_by
            and (found[m].project in (project, None)) and (viewer is None or viewer.can_see(found[m]))]
    judged = verdicts(conn, live, at, cfg)
    # an unaccepted claim (an assistant recap no user turn accepted) waits for review: the agent's rating does
    # not carry it into session start either (issue 33)
    return [m for m in live if judged[m.id][0] not in ("raw", "rejected", "stale", "needs_review")][: cfg.continuing_limit]


# -- the prompt bar's reading of a hit -----------------------------------------------------------
def leg_score(hit: Hit, leg: str) -> float | None:
    """The score one recall leg ('bm25' | 'vector') gave `hit`, None when that leg did not find it."""
    value = (hit.legs.get(leg) or {}).get("score")
    return None if value is None else float(value)


def rejected(hit: Hit) -> bool:
    """The user rejected this memory in review (it stays recallable: a query may still find it)."""
    review = hit.memory.metadata.get("review")
    return isinstance(review, dict) and review.get("status") == "rejected"


def awaiting_review(conn: Connection, memories: Sequence[Memory], at: str | None, cfg: RankingSettings) -> set[str]:
    """The ids of `memories` that wait for review (verdict `needs_review`: learned below the confidence gate,
    an assistant recap no user accepted among them, not accepted in review nor confirmed by the user's use).
    A prompt's query may find them, but only the user makes a rule: a prompt does not show them unasked
    either (issue 33; session start and steps hold them through `HELD`)."""
    pending = [m for m in memories if m.needs_review]
    if not pending:
        return set()
    return {m for m, (v, _) in verdicts(conn, pending, at, cfg).items() if v == "needs_review"}


# -- step injection --------------------------------------------------------------------------------
def admit_unasked(conn: Connection, memories: Sequence[Memory], at: str | None, cfg: RankingSettings) -> list[Memory]:
    """The memories (in order) a step may show: not raw, not waiting for review, not demoted."""
    judged = verdicts(conn, memories, at, cfg)
    return [m for m in memories if judged[m.id][0] not in HELD]
