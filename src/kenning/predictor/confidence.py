"""How far a session's labels can be trusted for training: evidence, not the judge alone.

The agent-relevance-feedback seed makes the agent's feedback the primary label and the
continuity judge a scaling signal; the 0.6 gate keeps garbage out, it must not keep direct
ground truth out. So a session's training confidence combines independent evidence, each
part in 0..1, as a noisy-OR (any strong source is enough; weak sources add up):

    feedback   0 without feedback, else 0.30 + 0.60·coverage + 0.05·min(3, mean ratings per
               rated memory), capped at 0.95 — coverage = injected memories the agent rated
               / injected; feedback on half of them alone (0.65) passes the gate
    judge      judge confidence × judge trust; trust = 1 − MAE/0.4 of the judge against
               reference labels (the calibration table's human labels, and the agent's own
               scores where an LLM judged the same memories), floored at 0.25, 1.0 until
               CALIBRATION_MIN_LABELS references exist. The heuristic judge reads the
               agent's feedback itself, so only an independent judge is checked against it
    behaviour  0.12 per candidate the session confirmed by itself (FTS-matched by a prompt,
               or its files / entities / identifiers touched by the transcript), capped at 0.5

    confidence = 1 − (1 − feedback)(1 − judge)(1 − behaviour)

A session with no feedback, a thin transcript (heuristic judge ≤ 0.3) and one FTS hit
stays under the gate (1 − 0.7·0.88 ≈ 0.38); one with most injected memories rated passes
whatever the judge says.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from kenning.predictor import constants as C
from kenning.store.predictor import CandidateRow, ScoredSession

FEEDBACK_BASE, FEEDBACK_COVERAGE, FEEDBACK_PER_RATING, FEEDBACK_CAP = 0.30, 0.60, 0.05, 0.95
BEHAVIOUR_PER_SIGNAL, BEHAVIOUR_CAP = 0.12, 0.5
TRUST_MAE_SCALE, TRUST_FLOOR = 0.4, 0.25
CALIBRATION_MIN_LABELS = 5


@dataclass
class Confidence:
    """A session's training confidence and every number that produced it."""

    value: float
    judge: float  # the judge's own confidence (session_scores.confidence)
    judge_name: str | None
    judge_trust: float
    injected: int
    rated: int  # injected memories with at least one agent rating (0.0 counts)
    ratings: int  # agent ratings received in total
    coverage: float
    fts_matched: int
    touched: int
    feedback_part: float
    judge_part: float
    behaviour_part: float

    def to_dict(self) -> dict[str, float | int | str | None]:
        return asdict(self)

    def explain(self) -> str:
        return (f"feedback {self.feedback_part:.2f} ({self.rated}/{self.injected} injected rated, "
                f"{self.ratings} ratings) · judge {self.judge_part:.2f} ({self.judge_name or 'none'} "
                f"{self.judge:.2f} × trust {self.judge_trust:.2f}) · behaviour {self.behaviour_part:.2f} "
                f"({self.fts_matched} FTS-matched, {self.touched} touched) → {self.value:.2f}")


def judge_trust(mae: float | None, labels: int) -> float:
    """How much the judge is trusted, from its mean absolute error against reference labels."""
    if mae is None or labels < CALIBRATION_MIN_LABELS:
        return 1.0
    return max(TRUST_FLOOR, min(1.0, 1.0 - float(mae) / TRUST_MAE_SCALE))


def session_confidence(session: ScoredSession, rows: list[CandidateRow], touched: set[str],
                       trust: float = 1.0) -> Confidence:
    """Training confidence of one scored session from its session_memories rows."""
    injected = [r for r in rows if r.get("was_injected")]
    rated = [r for r in injected if int(r.get("agent_feedback_count") or 0) > 0
             or r.get("agent_relevance_score") is not None]
    ratings = sum(max(1, int(r.get("agent_feedback_count") or 0)) for r in rated)
    coverage = len(rated) / len(injected) if injected else 0.0
    feedback = 0.0
    if rated:
        per = min(3.0, ratings / len(rated))
        feedback = min(FEEDBACK_CAP, FEEDBACK_BASE + FEEDBACK_COVERAGE * coverage + FEEDBACK_PER_RATING * per)
    judge = float(session.get("confidence") or 0.0)
    judge_part = max(0.0, min(1.0, judge * trust))
    fts = sum(1 for r in rows if int(r.get("fts_hit_count") or 0) > 0)
    touched_n = sum(1 for r in rows if r["memory_id"] in touched and not int(r.get("fts_hit_count") or 0))
    behaviour = min(BEHAVIOUR_CAP, BEHAVIOUR_PER_SIGNAL * (fts + touched_n))
    value = 1.0 - (1.0 - feedback) * (1.0 - judge_part) * (1.0 - behaviour)
    return Confidence(
        value=round(value, 4), judge=judge, judge_name=session.get("judge"), judge_trust=round(trust, 4),
        injected=len(injected), rated=len(rated), ratings=ratings, coverage=round(coverage, 4),
        fts_matched=fts, touched=touched_n, feedback_part=round(feedback, 4),
        judge_part=round(judge_part, 4), behaviour_part=round(behaviour, 4),
    )


def passes(confidence: float) -> bool:
    return confidence >= C.MIN_SCORER_CONFIDENCE
