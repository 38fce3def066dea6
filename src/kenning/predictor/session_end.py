"""Session-end bookkeeping: what the transcript touched, the session's labels and confidence,
the predictor-vs-baseline comparison, the α/EMA update, and recording all of it.

Runs after continuity scoring has written session_scores + relevance_score. Idempotent per
session key (a retried summary job must not count twice). Whether training is due afterwards
is the trainer's call (`trainer.Trainer.after_session`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from kenning.core import telemetry
from kenning.core.config_predictor import PredictorSettings
from kenning.predictor import alpha as A
from kenning.predictor.features import session_labels
from kenning.predictor.fusion import Comparison, compare, fts_overlap, rank_by_score
from kenning.predictor.interleave import SHARED, TEAMS, Credit, credit
from kenning.predictor.labels import comparison_relevance
from kenning.predictor.scoring import ContextRecorder
from kenning.predictor.touched import touched_memories
from kenning.store import predictor as store
from kenning.store import sessions as session_store
from kenning.store.backend import StoreDatabase
from kenning.store.predictor import ComparisonRecord

RECENT_KEYS = 200  # session keys remembered for idempotence


@dataclass(frozen=True)
class Skipped:
    reason: str


@dataclass(frozen=True)
class Recorded:
    comparison_id: str | None
    update: A.SessionUpdate
    state: A.AlphaState  # after this session
    confidence: float
    usable: bool
    touched: int  # candidates the transcript or prompts touched


class SessionEnd:
    def __init__(self, cfg: PredictorSettings, db: StoreDatabase, alpha: A.AlphaCell,
                 contexts: ContextRecorder) -> None:
        self.cfg = cfg
        self.db = db
        self.cell = alpha
        self.contexts = contexts

    def record(self, session_key: str) -> Recorded | Skipped:
        """Compare both rankings on what the session showed it wanted (labels.comparison_relevance,
        not the training labels), update EMA/α, record everything."""
        self.contexts.flush()  # the session's scoring context rows are read below
        conn = self.db.reader()
        session = store.session_score(conn, session_key)
        if session is None:
            return Skipped("no session score yet")
        if session_key in self.cell.state.recent_keys:  # a retried summary job must not count twice
            return Skipped("already recorded")
        touched = self._record_touched(session_key)
        labels, rows, _, _, context = session_labels(conn, session, store.embedding_model_in_use(conn))
        relevance = comparison_relevance(rows, touched, session.get("judge"))
        baseline = [r["memory_id"] for r in sorted(
            (r for r in rows if r["baseline_rank"] is not None), key=lambda r: r["baseline_rank"] or 0)]
        predicted = [r["memory_id"] for r in sorted(
            (r for r in rows if r["predictor_rank"] is not None), key=lambda r: r["predictor_rank"] or 0)]
        if not predicted and any(r["predictor_score"] is not None for r in rows):
            predicted = rank_by_score({r["memory_id"]: r["predictor_score"] for r in rows
                                       if r["predictor_score"] is not None})
        injected = [r["memory_id"] for r in rows if r["was_injected"]]
        unjudged = {c.memory_id for c in labels.labels if not c.judged}
        cmp = compare(baseline, predicted, injected, relevance, unjudged=unjudged) if predicted and baseline else None
        teams = {r["memory_id"]: str(r.get("team")) for r in rows  # shared picks are recorded, credited to neither
                 if r["was_injected"] and r.get("team") in (*TEAMS, SHARED)}
        won = credit(teams, relevance, unjudged) if teams and cmp is not None else None
        given_alpha = context.get("alpha") if context else None
        alpha_used = float(given_alpha) if isinstance(given_alpha, (int, float)) else 1.0
        cell = self.cell
        with cell.lock:
            counted = cmp is not None and cmp.verdict
            new_state, update = A.record_session(
                cell.state, predictor_ndcg=cmp.predictor_ndcg if cmp is not None and counted else None,
                baseline_ndcg=cmp.baseline_ndcg if cmp is not None and counted else None, confidence=labels.confidence,
                project=session.get("project"), min_training_sessions=self.cfg.min_training_sessions,
                drift_reset_window=self.cfg.drift_reset_window, no_evidence=cmp is not None and not cmp.verdict,
                interleaved=(won.predictor, won.baseline) if won is not None else None,
            )
            new_state.recent_keys = (new_state.recent_keys + [session_key])[-RECENT_KEYS:]
            comparison_id = None
            with self.db.with_write_tx() as wconn:
                store.save_state(wconn, A.STATE_KEY, new_state.to_dict())
                store.record_evidence(wconn, session_key, confidence=labels.confidence, usable=labels.usable,
                                      parts={**labels.evidence.to_dict()} if labels.evidence else {})
                if cmp is not None:
                    comparison_id = store.insert_comparison(wconn, {
                        "session_key": session_key, "predictor_ndcg": cmp.predictor_ndcg,
                        "baseline_ndcg": cmp.baseline_ndcg, "predictor_won": int(cmp.predictor_won),
                        "margin": cmp.margin, "scorer_confidence": labels.confidence,
                        "ema_updated": int(update.ema_updated), "success_rate": new_state.success_rate,
                        "alpha": alpha_used, "predictor_top_ids": cmp.predictor_top,
                        "baseline_top_ids": cmp.baseline_top,
                        "relevance_scores": {m: relevance.get(m, 0.0) for m in [*cmp.pool, *teams]},
                        "fts_overlap_score": fts_overlap(injected, {r["memory_id"]: r["fts_hit_count"] for r in rows}),
                        **_interleaved(won, teams),
                    })
            cell.state = new_state
        self._log_events(session_key, cmp, update, labels.confidence)
        return Recorded(comparison_id, update, new_state, labels.confidence, labels.usable, len(touched))

    def _record_touched(self, session_key: str) -> dict[str, str]:
        """Which candidates the transcript and prompts touched (files, identifiers, entities)."""
        conn = self.db.reader()
        transcript = session_store.get_transcript(conn, session_key)
        prompts = session_store.session_prompts(conn, session_key)
        text = "\n".join([transcript.transcript if transcript else "", *(p["prompt"] for p in prompts)])
        rows = session_store.session_memories(conn, session_key)
        contents = {r["memory_id"]: r.get("content") or "" for r in rows}
        touched = touched_memories(text, contents, store.memory_entity_names(conn, list(contents))) if text.strip() else {}
        with self.db.with_write_tx() as wconn:
            store.record_touched(wconn, session_key, touched)
        return touched

    def _log_events(self, key: str, cmp: Comparison | None, update: A.SessionUpdate, confidence: float) -> None:
        if cmp is not None:
            telemetry.log_event("predictor", "predictor.compare", session_key=key,
                                predictor_ndcg=cmp.predictor_ndcg, baseline_ndcg=cmp.baseline_ndcg,
                                predictor_won=cmp.predictor_won, margin=cmp.margin)
        if update.ema_updated:
            telemetry.log_event("predictor", "predictor.ema_update", session_key=key,
                                before=update.success_before, after=update.success_after)
        else:
            telemetry.log_event("predictor", "predictor.ema_skip", session_key=key,
                                reason=update.events[0].split(":", 1)[-1], confidence=confidence)
        state = self.cell.state
        for event in ("drift_reset", "cold_start_exit"):
            if event in update.events:
                telemetry.log_event("predictor", f"predictor.{event}", level="warning", session_key=key,
                                    success_rate=state.success_rate, drift_resets=state.drift_resets)


def _interleaved(won: Credit | None, teams: dict[str, str]) -> ComparisonRecord:
    """The interleaving part of a comparison row: the picks, their teams, each team's credit; the
    margin and the winner then follow the credit, not the NDCGs (interleave.py)."""
    if won is None:
        return {}
    return {"method": "interleave", "interleaved_ids": list(teams), "credit": teams,
            "predictor_credit": won.predictor, "baseline_credit": won.baseline,
            "margin": round(won.predictor - won.baseline, 6), "predictor_won": int(won.winner == "predictor")}


class SessionEndOutcome(TypedDict, total=False):
    """`Predictor.on_session_end`'s answer: skipped (with the reason) or recorded."""

    status: str  # "skipped" | "recorded"
    reason: str
    comparison_id: str | None
    ema_updated: bool
    predictor_won: bool | None
    events: list[str]
    alpha: float
    success_rate: float
    training_triggered: bool
    confidence: float
    usable: bool
    touched: int


def outcome_dict(outcome: Recorded | Skipped, *, alpha: float, training_triggered: bool) -> SessionEndOutcome:
    """`Predictor.on_session_end`'s answer (the API and the sessions' end job read it)."""
    if isinstance(outcome, Skipped):
        return {"status": "skipped", "reason": outcome.reason}
    update = outcome.update
    return {"status": "recorded", "comparison_id": outcome.comparison_id, "ema_updated": update.ema_updated,
            "predictor_won": update.won, "events": update.events, "alpha": alpha,
            "success_rate": outcome.state.success_rate, "training_triggered": training_triggered,
            "confidence": outcome.confidence, "usable": outcome.usable, "touched": outcome.touched}
