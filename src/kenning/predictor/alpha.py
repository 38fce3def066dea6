"""How the predictor earns α: pure state transitions, persisted by the service as JSON.

Per completed session (scorer seed, "Success Rate Tracking", "Cold Start", "Concept Drift"):
  - judge confidence < 0.6, no predictor ranking, or nothing in the pool the session showed it
    wanted (labels.comparison_relevance; recorded as a tie): record only, EMA untouched;
  - else win = predictor NDCG@10 > baseline NDCG@10 on that relevance — or, when the session was
    team-draft interleaved (interleave.py), predictor credit > baseline credit (equal: no verdict); success_rate = 0.9·success + 0.1·win,
    and the session's project slice (top 5 projects) updates the same way;
  - α = 1 − success_rate, except: 1.0 in cold start, while a drift retrain is pending, or when
    disabled; floors 0.8 for sessions 1–10 after cold-start exit and 0.6 for 11–20;
  - cold-start exit needs all three: a successful training, ≥ min_training_sessions
    high-confidence sessions, success > 0.4 over the last 10 comparisons;
  - drift reset: success_rate < 0.3 for `drift_reset_window` consecutive high-confidence
    sessions ⇒ α pinned to 1.0 until a retrain (with replay) swaps in, EMA reset to 0.5;
  - fallback on a losing streak (issue 32): LOSS_STREAK_FALLBACK comparisons lost in a row ⇒ α 1.0
    until the predictor wins one again or new weights serve. Seven losses in a row take the EMA's
    α from 0.4 to 0.7 only, and the drift reset waits ten more; after a change of the user's preferences the
    model keeps ranking what it learned before for a whole training interval, and the agent
    should not see its order meanwhile (interleaving still shows its picks, so it can win back).
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from collections.abc import Mapping
from typing import TypedDict, cast

from kenning.predictor import constants as C

STATE_KEY = "alpha"  # the AlphaState's row in predictor_state


class AlphaStateDict(TypedDict, total=False):
    """AlphaState as stored (predictor_state, JSON): every field, by name; a state stored by an
    older build may lack the newer ones (their defaults apply)."""

    success_rate: float
    sessions_completed: int
    scored_sessions: int
    comparisons: int
    recent_wins: list[int]
    first_training_done: bool
    model_version: int
    last_trained_at: str | None
    trained_through: str | None
    cold_start_exited: bool
    sessions_since_exit: int
    low_streak: int
    loss_streak: int
    drift_resets: int
    retraining: bool
    project_rates: dict[str, float]
    project_counts: dict[str, int]
    recent_keys: list[str]


@dataclass
class AlphaState:
    success_rate: float = 0.5
    sessions_completed: int = 0  # scored sessions seen at session end (any confidence)
    scored_sessions: int = 0  # ... of which judge confidence passed the gate
    comparisons: int = 0  # sessions that updated the EMA
    recent_wins: list[int] = field(default_factory=list)  # last COLD_START_WINDOW outcomes
    first_training_done: bool = False
    model_version: int = 0
    last_trained_at: str | None = None
    trained_through: str | None = None  # newest session start the serving model learned from
    cold_start_exited: bool = False
    sessions_since_exit: int = 0
    low_streak: int = 0
    loss_streak: int = 0  # comparisons lost in a row (LOSS_STREAK_FALLBACK)
    drift_resets: int = 0
    retraining: bool = False
    project_rates: dict[str, float] = field(default_factory=dict)
    project_counts: dict[str, int] = field(default_factory=dict)
    recent_keys: list[str] = field(default_factory=list)  # last sessions applied (idempotent end)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, object] | None) -> AlphaState:
        """The state stored as JSON (keys this build does not know are left out)."""
        if not data:
            return cls()
        known = set(cls.__dataclass_fields__)
        return cls(**cast(AlphaStateDict, {k: v for k, v in data.items() if k in known}))


@dataclass
class AlphaCell:
    """The one live AlphaState the predictor's parts share: scoring and status read it; session
    end and training replace it under `lock`, saved (STATE_KEY) in the write transaction of
    their own rows."""
    state: AlphaState
    lock: threading.RLock = field(default_factory=threading.RLock)


@dataclass
class SessionUpdate:
    ema_updated: bool
    won: bool | None
    success_before: float
    success_after: float
    events: list[str]


def early_floor(sessions_since_exit: int) -> float:
    for limit, floor in C.EARLY_ACTIVE_FLOORS:
        if sessions_since_exit < limit:
            return floor
    return 0.0


def current_alpha(state: AlphaState, *, disabled: bool = False) -> float:
    """The baseline's weight for the next session."""
    if disabled or state.retraining or not state.cold_start_exited or losing(state):
        return 1.0
    return min(1.0, max(early_floor(state.sessions_since_exit), 1.0 - state.success_rate))


def losing(state: AlphaState) -> bool:
    """Has the predictor lost its last LOSS_STREAK_FALLBACK comparisons (α falls back to 1.0)?"""
    return state.loss_streak >= C.LOSS_STREAK_FALLBACK


def _update_project(state: AlphaState, project: str | None, win: int) -> None:
    if not project:
        return
    if project not in state.project_rates and len(state.project_rates) >= C.MAX_PROJECT_SLICES:
        weakest = min(state.project_counts, key=lambda p: (state.project_counts[p], p))
        state.project_rates.pop(weakest, None)
        state.project_counts.pop(weakest, None)
    rate = state.project_rates.get(project, 0.5)
    state.project_rates[project] = (1 - C.EMA_ALPHA) * rate + C.EMA_ALPHA * win
    state.project_counts[project] = state.project_counts.get(project, 0) + 1


def record_session(
    state: AlphaState, *, predictor_ndcg: float | None, baseline_ndcg: float | None,
    confidence: float, project: str | None, min_training_sessions: int, drift_reset_window: int,
    no_evidence: bool = False, interleaved: tuple[float, float] | None = None,
) -> tuple[AlphaState, SessionUpdate]:
    """Apply one completed session to a copy of `state`. `no_evidence`: both rankings existed but
    nothing in the pool was shown to be wanted (the NDCGs come as None). `interleaved`: the
    session was team-draft interleaved, (predictor credit, baseline credit) decide it instead of
    the NDCGs; equal credit is no verdict (interleave.py)."""
    if interleaved is not None:
        predictor_ndcg, baseline_ndcg = interleaved
        no_evidence = predictor_ndcg == baseline_ndcg
        if no_evidence:
            predictor_ndcg = baseline_ndcg = None
    s = AlphaState.from_dict(state.to_dict())
    before = s.success_rate
    events: list[str] = []
    s.sessions_completed += 1
    if s.cold_start_exited:
        s.sessions_since_exit += 1
    confident = confidence >= C.MIN_SCORER_CONFIDENCE
    if confident:
        s.scored_sessions += 1
    if not confident or predictor_ndcg is None or baseline_ndcg is None:
        why = "low_confidence" if not confident else ("no_evidence" if no_evidence else "no_predictor_ranking")
        events.append("ema_skip:" + why)
        return s, SessionUpdate(False, None if predictor_ndcg is None else predictor_ndcg > (baseline_ndcg or 0),
                                before, before, events)
    win = 1 if predictor_ndcg > baseline_ndcg else 0
    s.success_rate = (1 - C.EMA_ALPHA) * s.success_rate + C.EMA_ALPHA * win
    s.comparisons += 1
    s.recent_wins = (s.recent_wins + [win])[-C.COLD_START_WINDOW:]
    _update_project(s, project, win)
    events.append("ema_update")
    s.loss_streak = 0 if win else s.loss_streak + 1
    if s.loss_streak == C.LOSS_STREAK_FALLBACK and s.cold_start_exited:
        events.append("loss_streak_fallback")
    if s.cold_start_exited:
        s.low_streak = s.low_streak + 1 if s.success_rate < C.DRIFT_RESET_THRESHOLD else 0
        if s.low_streak >= drift_reset_window:
            s.success_rate = C.DRIFT_RESET_EMA
            s.low_streak = 0
            s.retraining = True
            s.drift_resets += 1
            events.append("drift_reset")
    maybe_exit_cold_start(s, min_training_sessions, events)
    return s, SessionUpdate(True, bool(win), before, s.success_rate, events)


def maybe_exit_cold_start(s: AlphaState, min_training_sessions: int, events: list[str]) -> None:
    if s.cold_start_exited:
        return
    window = s.recent_wins[-C.COLD_START_WINDOW:]
    if (s.first_training_done and s.scored_sessions >= min_training_sessions
            and len(window) >= C.COLD_START_WINDOW
            and sum(window) / len(window) > C.COLD_START_MIN_SUCCESS):
        s.cold_start_exited = True
        s.sessions_since_exit = 0
        events.append("cold_start_exit")


def record_training(state: AlphaState, *, swapped: bool, model_version: int, at: str,
                    trained_through: str | None = None) -> AlphaState:
    s = AlphaState.from_dict(state.to_dict())
    if swapped:
        s.first_training_done = True
        s.model_version = model_version
        s.last_trained_at = at
        s.trained_through = trained_through
        s.retraining = False  # a pending drift retrain is done once new weights serve
        s.loss_streak = 0  # and a losing streak was the old weights'
    return s


def status_line(
    state: AlphaState, *, alpha: float, enabled: bool, crash_disabled: bool, crashes_last_hour: int,
    min_training_sessions: int, scored_sessions: int | None = None,
) -> str:
    """The one-line predictor status appended at session start (scorer seed §4.7).
    `scored_sessions`: training-eligible sessions in the store (defaults to those seen here)."""
    if not enabled:
        return "[predictor: disabled | off in config | baseline fallback]"
    if crash_disabled:
        return f"[predictor: disabled | crashes={crashes_last_hour}/hr | baseline fallback]"
    if state.retraining:
        return "[predictor: retraining | drift detected | baseline fallback]"
    if state.cold_start_exited and losing(state):
        return f"[predictor: fallback | lost {state.loss_streak} in a row | baseline until it wins]"
    if not state.first_training_done:
        seen = state.scored_sessions if scored_sessions is None else scored_sessions
        return (f"[predictor: collecting | {seen}/{min_training_sessions} sessions"
                " | baseline only]")
    if not state.cold_start_exited:
        return (f"[predictor: warming | success_rate={state.success_rate:.2f} | model_v{state.model_version}"
                " | baseline only]")
    return (f"[predictor: active | success_rate={state.success_rate:.2f} | α={alpha:.2f}"
            f" | model_v{state.model_version} | {state.sessions_completed} sessions]")
