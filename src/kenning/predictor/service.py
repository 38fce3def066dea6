"""`Predictor`: the one object the rest of kenning uses to reach the learned scorer — a thin facade
wiring the parts, each with one job:

    lifecycle.Sidecar        spawn the sidecar once training is possible, stop it (its client
                             supervises the process: timeouts, restarts, crash disable)
    scoring.Scoring          score a pool through the sidecar, fuse with the baseline at α,
                             record what was scored (scoring.ContextRecorder)
    session_end.SessionEnd   touched memories, labels, confidence, comparison, α/EMA, recording
    trainer.Trainer          when to train, canary, drift signal, recording the sidecar's answer
    status / reports         the status line and report; what was recorded, read back
The parts share one `alpha.AlphaCell` (the live α state, persisted under alpha.STATE_KEY).

Interface for the sessions engineer (session-start / session-end), all thread-safe:

    p = Predictor(settings, db); p.start()          # spawns the sidecar once training is possible
                                                     # (min_training_sessions usable sessions, or a
                                                     # checkpoint); until then score() answers None
    # session-start, after pre-filter and baseline ranking:
    scores = p.score(context, candidates)            # {memory_id: score} | None (None ⇒ baseline)
        context = predictor.context.ScoringContext(session_key, project, text, embedding, timestamp,
                  session_gap_hours, phase)    (phase: None at session start, "prompt:1" for the
                  first prompt's pool)
        (a later pool is scored as of the session's start — pass its started_at as timestamp — so
        its history features match training; record its ranking with store.record_pool)
        candidates = [predictor.context.Candidate.of(memory, embedding) for each pool memory]
    fused = p.fuse(baseline_ranked_ids, scores, top_k=k)
        → [Fused(memory_id, final_score, baseline_rank, predictor_rank, source)] best first;
          source ∈ effective | predictor | both | exploration. Record every row in
          session_memories (predictor_score = scores.get(id)); keep the 'exploration' row
          injected. Then diversity → budget → inject, with p.status_line() appended.
    # session-end, after continuity scoring has written session_scores + relevance_score:
    p.on_session_end(session_key)                    # comparison, EMA/α, training every N sessions
    p.status(); p.status_line(); p.train_now(); p.labels(key); p.audit(key); p.drift()

score() never raises and answers within score_timeout_ms (+ feature building); every other
method raises only kenning.core.errors types. The sidecar never writes the database: these
parts record contexts, comparisons, state and training results.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Unpack

from kenning.core.config import Settings
from kenning.predictor import constants as C
from kenning.predictor import reports, status
from kenning.predictor.alpha import STATE_KEY, AlphaCell, AlphaState
from kenning.predictor.client import SidecarClient
from kenning.predictor.context import Candidate, ScoringContext
from kenning.predictor.fusion import Fused, PredictorScores
from kenning.predictor.lifecycle import Sidecar
from kenning.predictor.scoring import Scoring
from kenning.predictor.labels import SessionLabelsJson
from kenning.predictor.session_end import Recorded, SessionEnd, SessionEndOutcome, outcome_dict
from kenning.predictor.trainer import Trainer
from kenning.store import predictor as store
from kenning.store.backend import StoreDatabase


class Predictor:
    def __init__(self, settings: Settings, db: StoreDatabase, *, extra_sidecar_args: list[str] | None = None,
                 base_weights: str | None = None) -> None:
        self.cfg = settings.predictor
        self.db = db
        self.cell = AlphaCell(AlphaState.from_dict(store.load_state(db.reader(), STATE_KEY)))
        self.sidecar = Sidecar(self.cfg, db, settings.predictor_dir, extra_args=extra_sidecar_args,
                               base_weights=base_weights)
        self.scoring = Scoring(self.cfg, db, self.sidecar, self.cell)
        self.session_end = SessionEnd(self.cfg, db, self.cell, self.scoring.contexts)
        self.trainer = Trainer(self.cfg, db, self.sidecar, self.cell)
        self.sidecar.on_checkpoint_refused = self.trainer.train_async

    @property
    def state(self) -> AlphaState:
        return self.cell.state

    @property
    def client(self) -> SidecarClient | None:
        return self.sidecar.client

    @property
    def checkpoint_path(self) -> Path:
        return self.sidecar.checkpoint_path

    # -- lifecycle ---------------------------------------------------------------
    def start(self, wait_ready: bool = False, *, force: bool = False) -> bool:
        """Spawn the sidecar once training is possible (or when `force`d); True when it runs. When it
        runs, read the history features scoring needs now, not in the first session start: in the
        background (scores answer None until it is read: seconds at a million memories), or before
        returning when `wait_ready`."""
        started = self.sidecar.start(wait_ready, force=force)
        if started and wait_ready:
            self.scoring.history()
        elif started:
            threading.Thread(target=self.scoring.warm, daemon=True, name="predictor-history").start()
        return started

    def stop(self) -> None:
        self.scoring.contexts.flush(5.0)
        self.trainer.cancel()
        self.sidecar.stop()
        self.trainer.wait(5.0)

    # -- session start -------------------------------------------------------------
    def alpha(self) -> float:
        return self.scoring.alpha()

    def score(self, session_context: ScoringContext, candidates: Sequence[Candidate]) -> PredictorScores | None:
        return self.scoring.score(session_context, candidates)

    def fuse(self, baseline_ranked_ids: list[str], predictor_scores: dict[str, float] | None, *,
             top_k: int | None = None) -> list[Fused]:
        return self.scoring.fuse(baseline_ranked_ids, predictor_scores, top_k=top_k)

    def flush_contexts(self, timeout_s: float = 10.0) -> bool:
        """Wait until queued scoring contexts are written (session end reads them)."""
        return self.scoring.contexts.flush(timeout_s)

    def status_line(self) -> str:
        return status.status_line(self.cfg, self.db, self.cell.state, self.sidecar.client, self.alpha())

    # -- session end ----------------------------------------------------------------
    def on_session_end(self, session_key: str) -> SessionEndOutcome:
        """Record the session (comparison, EMA/α), maybe trigger training; then refresh the
        history features scoring reads (this session's signals included)."""
        try:
            outcome = self.session_end.record(session_key)
            triggered = False
            if isinstance(outcome, Recorded):
                triggered = self.trainer.after_session(outcome.state.sessions_completed, outcome.update)
            return outcome_dict(outcome, alpha=self.alpha(), training_triggered=triggered)
        finally:
            self.scoring.refresh_history()

    # -- training ----------------------------------------------------------------------
    def train_async(self, trigger: str) -> bool:
        return self.trainer.train_async(trigger)

    def train_now(self, trigger: str = "manual", timeout_s: float = C.TRAIN_TIME_CAP_S + 90) -> dict[str, object]:
        return self.trainer.train_now(trigger, timeout_s)

    # -- reading ----------------------------------------------------------------------------
    def status(self) -> dict[str, object]:
        return status.build_status(self.cfg, self.db, self.cell.state, self.sidecar, alpha=self.alpha(),
                                   training_in_progress=self.trainer.in_progress(),
                                   training_waiting_since=self.trainer.waiting_since)

    def labels(self, session_key: str) -> SessionLabelsJson:
        return reports.labels(self.db, session_key)

    def audit(self, session_key: str) -> reports.AuditReport:
        return reports.audit(self.db, session_key)

    def comparisons(self, **filters: Unpack[reports.ComparisonFilters]) -> reports.ComparisonsPage:
        return reports.comparisons(self.db, **filters)

    def comparison(self, comparison_id: str) -> dict[str, object]:
        return reports.comparison(self.db, comparison_id)

    def training_history(self, limit: int = 50, offset: int = 0) -> reports.TrainingHistory:
        return reports.training_history(self.db, self.cell.state.model_version, limit=limit, offset=offset)

    def add_calibration(self, session_key: str, memory_id: str, human_label: float) -> dict[str, object]:
        return reports.add_calibration(self.db, session_key, memory_id, human_label)

    def drift(self) -> reports.DriftReport:
        return reports.drift(self.db, self.cell.state, self.cfg)
