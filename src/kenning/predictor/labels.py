"""Training labels: the full hierarchy of the scorer seed + the agent-relevance-feedback addendum.

Pure functions over plain dicts, so `kenning predictor labels SESSION` can show every step.

Per candidate (first rule that applies wins for negatives; otherwise the path's value):
  negatives   deleted within 24 h of being injected      → -0.5
              superseded (or deleted / deprecated)       → -0.3
  agent path  (injected, agent feedback present)
              0.7·agent + 0.2·fts_adjustment + 0.1·continuity_modifier
                fts_adjustment = agent when never FTS-matched (agent reasoning needs no
                                 explicit reference), else max(agent, 0.5 | 1.0 for ≥2 hits)
                continuity_modifier = agent·(0.5 + continuity): trust more in good sessions
              agent ≈ 0 but FTS-matched ≥ 2×             → at least 0.3
  continuity  injected:  judge's per-memory relevance, else continuity (≥ 0.5) or continuity·0.5;
                         FTS-matched → +0.1 (cap 1); never matched and continuity < 0.3 → −0.1
              not injected: judge relevance if any (≥ 0.5 with novel context → ≥ 0.7);
                         else cosine(context) > 0.6 → 0.25 (soft negative) else 0.0;
                         FTS ≥ 2 → ≥ 0.6, FTS = 1 → ≥ 0.3; novel_context_count > 0 → +0.1 on
                         these "missing" memories; access_count ≥ 10 → +0.05
              unknown: not injected, no FTS hit, not touched, judge relevance < 0.5, yet the
                         agent rated it useful in an earlier session (`rated_useful`): the
                         session cannot say whether it was wanted — nobody saw it — so it is
                         left out of the loss (judged = False) rather than taught as 0.0;
                         otherwise what the fused order stopped showing is labelled useless
                         and the model keeps burying it (issue 11, the drift window)
              edited in the 7 days before the session → +0.05
              touched (the transcript named its files / identifiers / entities, touched.py)
              counts as one more FTS hit on the continuity path — labels without an agent
              (issue 11); an agent's rating outranks it
Session gates: training confidence (confidence.py: agent feedback, judge × trust, behaviour)
< 0.6 → not used; label spread < 0.02 → skipped (no ordering signal); spread < 0.1 →
temperature 0.3 instead of 0.5. An agent score of 0.0 is a rating like any other.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TypedDict

from kenning.core.clock import parse_iso
from kenning.predictor import constants as C
from kenning.predictor.confidence import Confidence, session_confidence
from kenning.store.predictor import CandidateRow, ScoredSession

AGENT_WEIGHT, FTS_WEIGHT, CONTINUITY_WEIGHT = 0.7, 0.2, 0.1
HIGH_SESSION_SCORE = 0.5
HIGH_ACCESS_COUNT = 10
RECENT_EDIT_DAYS = 7.0
DELETE_WINDOW_HOURS = 24.0


@dataclass
class CandidateLabel:
    memory_id: str
    label: float
    path: str  # 'agent' | 'continuity' | 'negative' | 'unknown'
    reasons: list[str] = field(default_factory=list)
    judged: bool = True  # False: no evidence this session either way; the loss skips it


class SessionLabelsJson(TypedDict):
    """`SessionLabels.to_dict()`: the labels report (the API's /api/predictor/labels)."""

    session_key: str
    confidence: float
    continuity: float
    usable: bool
    skip_reason: str | None
    temperature: float
    spread: float
    confidence_parts: dict[str, float | int | str | None] | None
    confidence_explained: str | None
    labels: list[dict[str, object]]  # CandidateLabel fields (reports.labels adds the row's signals)


@dataclass
class SessionLabels:
    session_key: str
    confidence: float
    continuity: float
    labels: list[CandidateLabel]
    usable: bool
    skip_reason: str | None
    temperature: float
    spread: float
    evidence: Confidence | None = None

    def to_dict(self) -> SessionLabelsJson:
        return {
            "session_key": self.session_key, "confidence": self.confidence,
            "continuity": self.continuity, "usable": self.usable, "skip_reason": self.skip_reason,
            "temperature": self.temperature, "spread": self.spread,
            "confidence_parts": self.evidence.to_dict() if self.evidence else None,
            "confidence_explained": self.evidence.explain() if self.evidence else None,
            "labels": [c.__dict__ for c in self.labels],
        }


def _hours(earlier: str | None, later: str | None) -> float | None:
    if not earlier or not later:
        return None
    return (parse_iso(later) - parse_iso(earlier)).total_seconds() / 3600.0


def _negative(c: CandidateRow, session_start: str | None) -> CandidateLabel | None:
    mid = c["memory_id"]
    if c.get("is_deleted") and c.get("was_injected"):
        hours = _hours(session_start, c.get("deleted_at"))
        if hours is not None and 0 <= hours <= DELETE_WINDOW_HOURS:
            return CandidateLabel(mid, -0.5, "negative", [f"deleted {hours:.1f} h after injection: -0.5"])
    if c.get("superseded_by") or c.get("is_deleted"):
        why = "superseded" if c.get("superseded_by") else "deleted (deprecated)"
        return CandidateLabel(mid, -0.3, "negative", [f"{why}: -0.3"])
    return None


def _hits(c: CandidateRow) -> int:
    """FTS hits, plus one when the transcript touched the memory."""
    return int(c.get("fts_hit_count") or 0) + (1 if c.get("touched") else 0)


def _touched_reason(c: CandidateRow) -> list[str]:
    return [f"touched ({c['touched']}): counts as an FTS hit"] if c.get("touched") else []


def continuity_label(
    c: CandidateRow, session: ScoredSession, cosine: float | None
) -> tuple[float, list[str]]:
    """The continuity + behavioural path (no agent feedback)."""
    cont = float(session.get("score") or 0.0)
    novel = int(session.get("novel_context_count") or 0)
    rel = c.get("relevance_score")
    hits = _hits(c)
    reasons: list[str] = _touched_reason(c)
    if c.get("was_injected"):
        if rel is not None:
            label = float(rel)
            reasons.append(f"judge relevance {label:.2f}")
        elif cont >= HIGH_SESSION_SCORE:
            label = cont
            reasons.append(f"injected, session continuity {cont:.2f}")
        else:
            label = cont * 0.5
            reasons.append(f"injected, low session continuity {cont:.2f} x 0.5")
        if hits >= 1:
            label = min(1.0, label + 0.1)
            reasons.append(f"FTS-matched {hits}x: +0.1")
        elif cont < 0.3:
            label -= 0.1
            reasons.append("never FTS-matched and continuity < 0.3: -0.1")
        return label, reasons
    similar = cosine is not None and cosine > C.NEGATIVE_SIMILARITY_THRESHOLD
    if rel is not None:
        label = float(rel)
        reasons.append(f"judge relevance {label:.2f} (not injected)")
        if novel > 0 and label >= 0.5:
            label = max(0.7, label)
            reasons.append("missing context the user re-explained: >= 0.7")
    elif similar:
        label = C.SOFT_NEGATIVE_LABEL
        reasons.append(f"cosine {cosine:.2f} > {C.NEGATIVE_SIMILARITY_THRESHOLD}: soft negative 0.25")
    else:
        label = 0.0
        reasons.append("not injected: 0.0" + (f" (cosine {cosine:.2f})" if cosine is not None else ""))
    if hits >= 2:
        label = max(0.6, label)
        reasons.append(f"FTS-matched {hits}x though not injected: >= 0.6")
    elif hits == 1:
        label = max(0.3, label)
        reasons.append("FTS-matched once though not injected: >= 0.3")
    missing = hits >= 1 or similar or (rel is not None and rel >= 0.5)
    if novel > 0 and missing:
        label += 0.1
        reasons.append(f"novel_context_count {novel} > 0: +0.1")
    if int(c.get("access_count") or 0) >= HIGH_ACCESS_COUNT:
        label += 0.05
        reasons.append("high access_count, not injected: +0.05")
    return label, reasons


def agent_label(c: CandidateRow, session: ScoredSession) -> tuple[float, list[str]]:
    agent = float(c["agent_relevance_score"] or 0.0)  # (called when the agent rated it)
    cont = float(session.get("score") or 0.0)
    hits = int(c.get("fts_hit_count") or 0)  # the agent's rating outranks "touched"
    fts_adj = agent if hits == 0 else max(agent, 1.0 if hits >= 2 else 0.5)
    cont_mod = max(-1.0, min(1.0, agent * (0.5 + cont)))
    label = AGENT_WEIGHT * agent + FTS_WEIGHT * fts_adj + CONTINUITY_WEIGHT * cont_mod
    reasons = [f"agent {agent:.2f} x0.7 + fts_adj {fts_adj:.2f} x0.2 + continuity_mod {cont_mod:.2f} x0.1"]
    if hits >= 2 and abs(agent) < 0.05 and label < 0.3:
        label = 0.3
        reasons.append(f"agent ~0 but FTS-matched {hits}x: bumped to 0.3")
    return label, reasons


def _unjudged(c: CandidateRow, rated_useful: Collection[str]) -> bool:
    """Not shown and no sign this session that it was wanted (no FTS hit, not touched, judge
    relevance under 0.5), but rated useful before: its label is unknown."""
    rel = c.get("relevance_score")
    return (c["memory_id"] in rated_useful and not c.get("was_injected") and not _hits(c)
            and (rel is None or float(rel) < HIGH_SESSION_SCORE))


def label_candidate(
    c: CandidateRow, session: ScoredSession, cosine: float | None, session_start: str | None,
    rated_useful: Collection[str] = (),
) -> CandidateLabel:
    negative = _negative(c, session_start)
    if negative is not None:
        return negative
    if _unjudged(c, rated_useful):
        return CandidateLabel(c["memory_id"], 0.0, "unknown",
                              ["not shown, no signal, rated useful before: unknown, left out of the loss"],
                              judged=False)
    if c.get("was_injected") and c.get("agent_relevance_score") is not None:
        label, reasons = agent_label(c, session)
        path = "agent"
    else:
        label, reasons = continuity_label(c, session, cosine)
        path = "continuity"
    edited_hours = _hours(c.get("memory_updated_at"), session_start)
    if (edited_hours is not None and 0 <= edited_hours <= RECENT_EDIT_DAYS * 24
            and c.get("memory_updated_at") != c.get("memory_created_at")):
        label += 0.05
        reasons.append("edited in the week before the session: +0.05")
    return CandidateLabel(c["memory_id"], max(-1.0, min(1.0, label)), path, reasons)


HEURISTIC_JUDGE = "heuristic"  # session_scores.judge of the judge built from FTS hits and word overlap


def comparison_relevance(rows: list[CandidateRow], touched: Collection[str], judge: str | None) -> dict[str, float]:
    """What the session showed it wanted, for the predictor-vs-baseline comparison that earns α.

    Per candidate: the agent's rating where it rated the memory; else 1.0 when the transcript
    touched it (named its files, identifiers or entities); else an independent judge's
    relevance (an LLM's; not the heuristic judge's, which is made of FTS hits and word
    overlap); else 0.0. Superseded and deleted memories are 0.0.

    Not the training labels: those credit whatever was injected (the continuity path) and
    whatever the prompts' FTS matched, so a ranking scored on them wins by having been shown,
    or by chasing the prompts' wording, and α hands it the session start. On
    bench/predictor_sim's no-feedback arm (seed 12, sessions 10-44) the training labels gave
    the predictor 31 of 35 comparisons where the sim's ground truth gave it 7 (11 of 35
    verdicts agree); this relevance gives it 5 (31 agree); with feedback on every prompt
    144 → 161 of 190 agree, a third of prompts 140 → 153 (issue 11)."""
    out: dict[str, float] = {}
    for c in rows:
        mid = c["memory_id"]
        rel = c.get("relevance_score")
        if c.get("superseded_by") or c.get("is_deleted"):
            value = 0.0
        elif c.get("agent_feedback_count") and c.get("agent_relevance_score") is not None:
            value = float(c["agent_relevance_score"] or 0.0)
        elif mid in touched:
            value = 1.0
        elif rel is not None and judge != HEURISTIC_JUDGE:
            value = float(rel)
        else:
            value = 0.0
        out[mid] = max(-1.0, min(1.0, value))
    return out


def build_session_labels(
    session: ScoredSession, candidates: list[CandidateRow], cosines: list[float | None],
    session_start: str | None = None, *, touched: dict[str, str] | None = None, trust: float = 1.0,
    rated_useful: Collection[str] = (),
) -> SessionLabels:
    """Label every candidate of one scored session and decide whether it can train.
    `touched`: {memory_id: why} the transcript touched; `trust`: the judge's (confidence.judge_trust);
    `rated_useful`: memories the agent rated useful in earlier sessions."""
    start = session_start or session.get("started_at")
    touched = touched or {}
    rows: list[CandidateRow] = [{**c, "touched": touched.get(c["memory_id"])} for c in candidates]
    labels = [label_candidate(c, session, cos, start, rated_useful) for c, cos in zip(rows, cosines)]
    values = [c.label for c in labels if c.judged]
    spread = (max(values) - min(values)) if values else 0.0
    evidence = session_confidence(session, candidates, set(touched), trust)
    confidence = evidence.value
    skip = None
    if not labels:
        skip = "no_candidates"
    elif confidence < C.MIN_SCORER_CONFIDENCE:
        skip = "low_confidence"
    elif spread < C.SKIP_SPREAD:
        skip = "low_variance"
    temperature = C.LOW_VARIANCE_TEMPERATURE if spread < C.LOW_VARIANCE_SPREAD else C.LOSS_TEMPERATURE
    return SessionLabels(
        session_key=session["session_key"], confidence=confidence,
        continuity=float(session.get("score") or 0.0), labels=labels, usable=skip is None,
        skip_reason=skip, temperature=temperature, spread=spread, evidence=evidence,
    )
