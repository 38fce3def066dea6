"""`Predictor`: the one object the rest of kenning uses to reach the learned scorer.

Interface for the sessions engineer (session-start / session-end), all thread-safe:

    p = Predictor(settings, db); p.start()          # spawns the sidecar once training is possible
                                                     # (min_training_sessions usable sessions, or a
                                                     # checkpoint); until then score() answers None
    # session-start, after pre-filter and baseline ranking:
    scores = p.score(session_context, candidates)    # {memory_id: score} | None (None ⇒ baseline)
        session_context = {"session_key", "project", "embedding": list|ndarray|None,
                           "text": str|None, "timestamp": iso|None, "session_gap_hours": float|None,
                           "phase": None at session start | "prompt:1" for the first prompt's pool}
        (a later pool is scored as of the session's start — pass its started_at as timestamp — so
        its history features match training; record its ranking with store.record_pool)
        candidates = [{"id", "embedding": list|ndarray|bytes|None, "content", "importance",
                       "access_count", "created_at", "superseded_by"}]   (Memory.to_dict() + embedding)
        aliases accepted: "vector" for "embedding", "memory_id" for "id", "context" for "text".
    fused = p.fuse(baseline_ranked_ids, scores, top_k=k)
        → [Fused(memory_id, final_score, baseline_rank, predictor_rank, source)] best first;
          source ∈ effective | predictor | both | exploration. Record every row in
          session_memories (predictor_score = scores.get(id)); keep the 'exploration' row
          injected. Then diversity → budget → inject, with p.status_line() appended.
    # session-end, after continuity scoring has written session_scores + relevance_score:
    p.on_session_end(session_key)                    # comparison, EMA/α, training every N sessions
    p.status(); p.status_line(); p.train_now(); p.labels(key); p.audit(key); p.drift()

score() never raises and answers within score_timeout_ms (+ feature building); every other
method raises only kenning.core.errors types. The sidecar never writes the database: this
object records contexts, comparisons, state and training results. What was recorded is read
back by predictor.reports (labels, audit, comparisons, training log, drift, calibration); the
read methods here delegate to it.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from datetime import timedelta
from typing import Any

import numpy as np

from kenning.core import telemetry
from kenning.core.clock import now_iso, parse_iso, to_iso, utcnow
from kenning.predictor import alpha as A
from kenning.predictor import constants as C
from kenning.predictor import reports
from kenning.predictor.client import SidecarClient, SidecarError, sidecar_argv
from kenning.predictor.features import encode_b64, feature_row, session_labels, time_features
from kenning.predictor.fusion import Fused, PredictorScores, compare, explore, fts_overlap, rank_by_score, rrf_fuse
from kenning.predictor.history import NO_HISTORY, History, load_all
from kenning.predictor.touched import touched_memories
from kenning.store import predictor as store
from kenning.store import sessions as session_store
from kenning.store.vectors import dominant_dims

STATE_KEY = "alpha"


def _unseen(params: dict[str, Any]) -> list[str]:
    """Candidates whose history features are all "never" (history.NO_HISTORY)."""
    n = len(NO_HISTORY)
    return [m for m, row in zip(params.get("candidate_ids", []), params.get("candidate_features", []))
            if tuple(row[-n:]) == NO_HISTORY]


def _first(d: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if d.get(key) is not None:
            return d[key]
    return None


def _vector(value: Any) -> np.ndarray | None:
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return np.frombuffer(bytes(value), dtype=np.float32)
    arr = np.asarray(value, dtype=np.float32)
    return arr if arr.ndim == 1 and arr.size else None


class Predictor:
    def __init__(self, settings: Any, db: Any, *, extra_sidecar_args: list[str] | None = None,
                 base_weights: str | None = None) -> None:
        self.settings = settings
        self.cfg = settings.predictor
        self.db = db
        self.checkpoint_path = settings.predictor_dir / "model.bin"
        self.extra_sidecar_args = list(extra_sidecar_args or [])
        self.base_weights = base_weights
        self.client: SidecarClient | None = None
        self._lock = threading.RLock()
        self._train_thread: threading.Thread | None = None
        self._rng = random.Random()
        self._param_count: int | None = None
        self.native_dim = 384
        self.state = A.AlphaState.from_dict(store.load_state(db.reader(), STATE_KEY))
        self._contexts: queue.Queue = queue.Queue()
        self._context_writer: threading.Thread | None = None
        self._history: History | None = None  # scoring's history features, as of the last session end

    # -- lifecycle ---------------------------------------------------------------
    def training_possible(self) -> bool:
        """Enough usable sessions to train on (or a trained model on disk): the sidecar may run."""
        if self.checkpoint_path.exists():
            return True
        return store.count_usable_sessions(self.db.reader()) >= self.cfg.min_training_sessions

    def start(self, wait_ready: bool = False, *, force: bool = False) -> bool:
        """Spawn the sidecar — only once training is possible, unless `force` (a manual train).
        A fresh install therefore holds no second PyTorch process. True when it is running."""
        if not self.cfg.enabled:
            return False
        with self._lock:
            if self.client is not None:
                return True
            if not force and not self.training_possible():
                return False
            self._spawn_sidecar()
        if wait_ready:
            self.client.wait_ready(self.client.ready_timeout_s)
        return True

    def _spawn_sidecar(self) -> None:
        """The one place the sidecar process is created (argv, supervision, log file)."""
        self.settings.predictor_dir.mkdir(parents=True, exist_ok=True)
        self.native_dim = dominant_dims(self.db.reader()) or 384
        argv = sidecar_argv(self.db.path, self.checkpoint_path, native_dim=self.native_dim,
                            base_weights=self.base_weights, extra=self.extra_sidecar_args)
        self.client = SidecarClient(
            argv, score_timeout_ms=self.cfg.score_timeout_ms,
            crash_disable_threshold=self.cfg.crash_disable_threshold,
            stderr_path=self.settings.predictor_dir / "sidecar.log",
        )
        self.client.start()
        threading.Thread(target=self._retrain_if_refused, daemon=True, name="predictor-checkpoint-check").start()

    def _retrain_if_refused(self) -> None:
        """An old or corrupt checkpoint is refused by the sidecar (it serves untrained): retrain."""
        client = self.client
        if client is None or not client.wait_ready(client.ready_timeout_s):
            return
        error = client.last_status.get("checkpoint_error")
        if error:
            telemetry.log_event("predictor", "predictor.checkpoint_refused", level="warning", error=error)
            self.train_async("checkpoint_refused")

    def stop(self) -> None:
        self.flush_contexts(5.0)
        if self.client is not None:
            self.client.stop()
        thread = self._train_thread
        if thread is not None:
            thread.join(timeout=5.0)

    # -- session start -------------------------------------------------------------
    def alpha(self) -> float:
        disabled = not self.cfg.enabled or self.client is None or self.client.disabled
        return A.current_alpha(self.state, disabled=disabled)

    def score(self, session_context: dict[str, Any], candidates: list[dict[str, Any]]) -> dict[str, float] | None:
        """Predictor scores by memory id, or None: use the baseline. Never raises."""
        started = time.perf_counter()
        result, params = None, {}
        try:
            if self.client is not None and candidates:
                params = self._score_params(session_context, candidates)
                result = self.client.score(params)
        except Exception as exc:  # boundary: a predictor problem must never reach the agent
            telemetry.record_error("predictor", f"predictor_score_error: {exc}")
        scores = None
        if result and result.get("model_ready"):
            scores = PredictorScores({s["id"]: float(s["score"]) for s in result.get("scores", [])},
                                     unseen=_unseen(params))
        latency = (time.perf_counter() - started) * 1000.0
        self._record_context(session_context, scores is not None, result, latency)
        if scores is not None:
            top = max(scores, key=scores.get) if scores else None
            telemetry.log_event("predictor", "predictor.score", candidates=len(candidates),
                                top_pick=top, latency_ms=round(latency, 2), alpha=self.alpha(),
                                session_key=session_context.get("session_key"))
        return scores

    def _score_params(self, ctx: dict[str, Any], candidates: list[dict[str, Any]]) -> dict[str, Any]:
        at = parse_iso(ctx.get("timestamp") or now_iso())
        gap = ctx.get("session_gap_hours")
        if gap is None:
            previous = store.previous_session_start(self.db.reader(), to_iso(at))
            gap = (at - parse_iso(previous)).total_seconds() / 3600.0 if previous else None
        when = time_features(at, gap)
        vecs = [_vector(_first(c, "embedding", "vector")) for c in candidates]
        dims = self.native_dim
        has = [v is not None and v.shape[0] == dims for v in vecs]
        matrix = np.zeros((len(candidates), dims), np.float32)
        for i, v in enumerate(vecs):
            if has[i]:
                matrix[i] = v
        ctx_vec = _vector(_first(ctx, "embedding", "vector"))
        ids = [str(_first(c, "id", "memory_id")) for c in candidates]
        hist = self._scoring_history().features(ids, to_iso(at), ctx.get("project"), exclude=ctx.get("session_key"))
        params: dict[str, Any] = {
            "session_key": ctx.get("session_key"), "project": ctx.get("project"),
            "context_text": _first(ctx, "text", "context"), "embedding_dims": dims,
            "candidate_ids": ids,
            "candidate_embeddings_b64": encode_b64(matrix), "candidate_has_embedding": has,
            "candidate_texts": [None if has[i] else c.get("content") for i, c in enumerate(candidates)],
            "candidate_features": [feature_row(c, at, when, has[i]) + hist[i].tolist()
                                   for i, c in enumerate(candidates)],
            "signals": {"time_of_day": (at.hour + at.minute / 60) / 24, "day_of_week": at.weekday(),
                        "month_of_year": at.month, "project": ctx.get("project"), "session_gap_hours": gap},
        }
        if ctx_vec is not None and ctx_vec.shape[0] == dims:
            params["context_embedding_b64"] = encode_b64(ctx_vec[None, :])
        return params

    def _scoring_history(self) -> History:
        """Every signal event, loaded once and refreshed at each session end (reading a hundred
        candidates' events per score cost 100-300 ms at 500 sessions; bench/predictor_speed.py).
        The same `History` training reads, so scoring and training see the same values."""
        history = self._history
        if history is None:
            history = self._history = load_all(self.db.reader())
        return history

    def _record_context(self, ctx: dict[str, Any], scored: bool, result: dict | None, latency: float) -> None:
        """Queue the session's scoring context for the background writer (never blocks scoring)."""
        key = ctx.get("session_key")
        if not key or self.db.read_only:
            return
        if ctx.get("phase"):  # a later pool of the session (e.g. 'prompt:1'): its own context row
            key = f"{key}#{ctx['phase']}"
        vec = _vector(_first(ctx, "embedding", "vector"))
        row = dict(
            project=ctx.get("project"), context_text=(_first(ctx, "text", "context") or "")[:4000],
            embedding=vec.tobytes() if vec is not None else None,
            embedding_dims=int(vec.shape[0]) if vec is not None else None,
            alpha=self.alpha() if scored else 1.0,
            model_version=(result or {}).get("model_version"), scored=scored, latency_ms=latency,
        )
        self._contexts.put((key, row))
        with self._lock:
            if self._context_writer is None or not self._context_writer.is_alive():
                self._context_writer = threading.Thread(target=self._write_contexts, daemon=True,
                                                        name="predictor-context-writer")
                self._context_writer.start()

    def _write_contexts(self) -> None:
        while True:
            try:
                key, row = self._contexts.get(timeout=5.0)
            except queue.Empty:
                return
            try:
                with self.db.with_write_tx() as conn:
                    store.upsert_session_context(conn, key, **row)
            except Exception as exc:  # background boundary: recording must not break anything
                telemetry.record_error("predictor", f"predictor_context_record_failed: {exc}", session_key=key)
            finally:
                self._contexts.task_done()

    def flush_contexts(self, timeout_s: float = 10.0) -> bool:
        """Wait until queued scoring contexts are written (session end reads them)."""
        deadline = time.monotonic() + timeout_s
        while self._contexts.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.005)
        return not self._contexts.unfinished_tasks

    def fuse(self, baseline_ranked_ids: list[str], predictor_scores: dict[str, float] | None, *,
             top_k: int | None = None) -> list[Fused]:
        """RRF of the two rankings with the current α (+ exploration when top_k is given)."""
        predictor_ids = None
        if predictor_scores:
            known = {m: s for m, s in predictor_scores.items()}
            predictor_ids = rank_by_score(known)
        fused = rrf_fuse(baseline_ranked_ids, predictor_ids, self.alpha(), self.cfg.rrf_k, top_k,
                         unseen=getattr(predictor_scores, "unseen", ()))
        if top_k is not None:
            fused = explore(fused, top_k, self.cfg.exploration_rate, self._rng,
                            enabled=predictor_ids is not None and self.state.cold_start_exited)
        return fused

    def status_line(self) -> str:
        client = self.client
        return A.status_line(
            self.state, alpha=self.alpha(), enabled=self.cfg.enabled,
            crash_disabled=bool(client and client.disabled),
            crashes_last_hour=client.crashes_last_hour() if client else 0,
            min_training_sessions=self.cfg.min_training_sessions,
            scored_sessions=store.count_usable_sessions(self.db.reader()),
        )

    # -- session end ----------------------------------------------------------------
    def on_session_end(self, session_key: str) -> dict[str, Any]:
        """Compare both rankings on this session's labels, update EMA/α, maybe trigger training;
        then refresh the history features scoring reads (this session's signals included)."""
        try:
            return self._on_session_end(session_key)
        finally:
            self._history = load_all(self.db.reader())

    def _on_session_end(self, session_key: str) -> dict[str, Any]:
        self.flush_contexts()
        conn = self.db.reader()
        session = store.session_score(conn, session_key)
        if session is None:
            return {"status": "skipped", "reason": "no session score yet"}
        if session_key in self.state.recent_keys:  # a retried summary job must not count twice
            return {"status": "skipped", "reason": "already recorded"}
        touched = self._record_touched(session_key)
        labels, rows, _, _, context = session_labels(conn, session, store.embedding_model_in_use(conn))
        relevance = labels.by_id()
        baseline = [r["memory_id"] for r in sorted(
            (r for r in rows if r["baseline_rank"] is not None), key=lambda r: r["baseline_rank"])]
        predicted = [r["memory_id"] for r in sorted(
            (r for r in rows if r["predictor_rank"] is not None), key=lambda r: r["predictor_rank"])]
        if not predicted and any(r["predictor_score"] is not None for r in rows):
            predicted = rank_by_score({r["memory_id"]: r["predictor_score"] for r in rows
                                       if r["predictor_score"] is not None})
        injected = [r["memory_id"] for r in rows if r["was_injected"]]
        cmp = compare(baseline, predicted, injected, relevance) if predicted and baseline else None
        alpha_used = float(context.get("alpha", 1.0)) if context else 1.0
        with self._lock:
            new_state, update = A.record_session(
                self.state, predictor_ndcg=cmp.predictor_ndcg if cmp else None,
                baseline_ndcg=cmp.baseline_ndcg if cmp else None, confidence=labels.confidence,
                project=session.get("project"), min_training_sessions=self.cfg.min_training_sessions,
                drift_reset_window=self.cfg.drift_reset_window,
            )
            new_state.recent_keys = (new_state.recent_keys + [session_key])[-200:]
            comparison_id = None
            with self.db.with_write_tx() as wconn:
                store.save_state(wconn, STATE_KEY, new_state.to_dict())
                store.record_evidence(wconn, session_key, confidence=labels.confidence, usable=labels.usable,
                                      parts=labels.evidence.to_dict() if labels.evidence else {})
                if cmp is not None:
                    comparison_id = store.insert_comparison(wconn, {
                        "session_key": session_key, "predictor_ndcg": cmp.predictor_ndcg,
                        "baseline_ndcg": cmp.baseline_ndcg, "predictor_won": int(cmp.predictor_won),
                        "margin": cmp.margin, "scorer_confidence": labels.confidence,
                        "ema_updated": int(update.ema_updated), "success_rate": new_state.success_rate,
                        "alpha": alpha_used, "predictor_top_ids": cmp.predictor_top,
                        "baseline_top_ids": cmp.baseline_top,
                        "relevance_scores": {m: relevance.get(m, 0.0) for m in cmp.pool},
                        "fts_overlap_score": fts_overlap(injected, {r["memory_id"]: r["fts_hit_count"] for r in rows}),
                    })
            self.state = new_state
        self._log_session_events(session_key, cmp, update, labels.confidence)
        train_due = (new_state.sessions_completed % self.cfg.train_interval_sessions == 0
                     or "drift_reset" in update.events)
        triggered = False
        if self.client is None and self.cfg.enabled and self.training_possible():
            self.start()  # the first time training is possible: spawn, and train right away
            train_due = self.client is not None
        if train_due:
            self._record_drift_signal()
            triggered = self.train_async("drift_reset" if "drift_reset" in update.events else "interval")
        return {"status": "recorded", "comparison_id": comparison_id, "ema_updated": update.ema_updated,
                "predictor_won": update.won, "events": update.events, "alpha": self.alpha(),
                "success_rate": new_state.success_rate, "training_triggered": triggered,
                "confidence": labels.confidence, "usable": labels.usable, "touched": len(touched)}

    def _record_touched(self, session_key: str) -> dict[str, str]:
        """Which candidates the transcript and prompts touched (files, identifiers, entities)."""
        conn = self.db.reader()
        transcript = session_store.get_transcript(conn, session_key)
        prompts = session_store.session_prompts(conn, session_key)
        text = "\n".join([transcript["transcript"] if transcript else "", *(p["prompt"] for p in prompts)])
        rows = session_store.session_memories(conn, session_key)
        contents = {r["memory_id"]: r.get("content") or "" for r in rows}
        touched = touched_memories(text, contents, store.memory_entity_names(conn, list(contents))) if text.strip() else {}
        with self.db.with_write_tx() as wconn:
            store.record_touched(wconn, session_key, touched)
        return touched

    def _log_session_events(self, key: str, cmp: Any, update: A.SessionUpdate, confidence: float) -> None:
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
        for event in ("drift_reset", "cold_start_exit"):
            if event in update.events:
                telemetry.log_event("predictor", f"predictor.{event}", level="warning", session_key=key,
                                    success_rate=self.state.success_rate, drift_resets=self.state.drift_resets)

    def _record_drift_signal(self) -> None:
        since = to_iso(utcnow() - timedelta(days=30))
        row = store.relevance_by_memory_age(self.db.reader(), since)
        signal = None
        if row["recent_avg"] is not None and row["old_avg"] is not None:
            signal = row["recent_avg"] - row["old_avg"]
        with self.db.with_write_tx() as conn:
            store.insert_drift_signal(conn, signal, row["recent_avg"], row["old_avg"], row["samples"] or 0)

    # -- training ----------------------------------------------------------------------
    def train_async(self, trigger: str) -> bool:
        """Start a training run in the background; False when one is running or no sidecar is up."""
        if self.client is None or self.client.disabled:
            return False
        with self._lock:
            if self._train_thread is not None and self._train_thread.is_alive():
                return False
            self._train_thread = threading.Thread(target=self._train_quietly, args=(trigger,), daemon=True,
                                                  name="predictor-train")
            self._train_thread.start()
            return True

    def _train_quietly(self, trigger: str) -> None:
        try:
            self.train_now(trigger)
        except Exception as exc:  # background thread boundary
            telemetry.record_error("predictor", f"predictor_train_failure: {exc}", trigger=trigger)

    def _refresh_canary(self) -> list[str]:
        conn = self.db.reader()
        current = store.canary_rows(conn)
        lag = store.canary_lag_days(conn)  # session time: a replay or a busy week moves it too
        stale = not current or min(r["added_at"] for r in current) < to_iso(
            utcnow() - timedelta(days=C.CANARY_REFRESH_DAYS)) or (lag is not None and lag > C.CANARY_REFRESH_DAYS)
        if stale or len(current) < C.CANARY_SIZE:
            best = store.canary_candidates(conn, C.MIN_SCORER_CONFIDENCE, C.CANARY_SIZE)
            if [r["session_key"] for r in best] != [r["session_key"] for r in current]:
                with self.db.with_write_tx() as wconn:
                    store.replace_canary(wconn, [(r["session_key"], r["confidence"]) for r in best])
                current = store.canary_rows(self.db.reader())
        return [r["session_key"] for r in current]

    def train_now(self, trigger: str = "manual", timeout_s: float = C.TRAIN_TIME_CAP_S + 90) -> dict[str, Any]:
        """Run train_from_db in the sidecar, log the outcome; returns the training summary."""
        if self.client is None and self.cfg.enabled:
            self.start(force=True)  # a training request is reason enough to run the sidecar
        if self.client is None:
            raise SidecarError("predictor is not running (disabled in config)")
        if not self.client.ready:
            self.client.wait_ready(self.client.ready_timeout_s)
        canary = self._refresh_canary()
        started = time.perf_counter()
        error = None
        try:
            result = self.client.call("train_from_db", {"canary_keys": canary, "trigger": trigger}, timeout_s)
        except (SidecarError, TimeoutError) as exc:
            result, error = {}, str(exc)
        duration = (time.perf_counter() - started) * 1000.0
        telemetry.record_latency("predictor_train", duration)
        swapped = bool(result.get("swapped"))
        previous = store.list_training_log(self.db.reader(), limit=1)[0]
        failures = (previous[0]["train_validation_failures"] if previous else 0) + (0 if swapped or error else 1)
        canary_metrics = result.get("canary") or {}
        with self._lock:
            new_state = A.record_training(self.state, swapped=swapped,
                                          model_version=int(result.get("model_version") or self.state.model_version),
                                          at=now_iso())
            events: list[str] = []
            A.maybe_exit_cold_start(new_state, self.cfg.min_training_sessions, events)
            with self.db.with_write_tx() as conn:
                log_id = store.insert_training_log(conn, {
                    "model_version": int(result.get("model_version") or self.state.model_version),
                    "trigger": trigger, "loss": result.get("loss"), "step": int(result.get("steps") or 0),
                    "sample_count": int(result.get("samples_used") or 0),
                    "samples_skipped": sum((result.get("samples_skipped") or {}).values()),
                    "duration_ms": float(result.get("duration_ms") or duration),
                    "canary_ndcg": canary_metrics.get("canary_ndcg"),
                    "canary_ndcg_delta": canary_metrics.get("canary_ndcg_delta"),
                    "canary_score_variance": canary_metrics.get("canary_score_variance"),
                    "canary_topk_churn": canary_metrics.get("canary_topk_churn"),
                    "canary_topk_overlap": canary_metrics.get("canary_topk_overlap"),
                    "gates": result.get("gates") or {}, "swapped": int(swapped),
                    "train_validation_failures": failures, "drift_resets": new_state.drift_resets,
                    "loss_curve": result.get("loss_curve") or [], "error": error or result.get("error"),
                })
                store.save_state(conn, STATE_KEY, new_state.to_dict())
            self.state = new_state
        level = "info" if swapped else "warning"
        telemetry.log_event("predictor", "predictor.train", level=level, trigger=trigger, swapped=swapped,
                            loss=result.get("loss"), steps=result.get("steps"), duration_ms=round(duration, 1),
                            model_version=new_state.model_version, error=error or result.get("error"))
        if not swapped:
            telemetry.record_error("predictor", f"predictor_train_failure: {error or result.get('error')}",
                                   trigger=trigger)
        return {"log_id": log_id, "trigger": trigger, "error": error, **result}

    # -- reading ----------------------------------------------------------------------------
    def param_count(self) -> int:
        if self._param_count is None:
            from kenning.predictor.model import CrossAttentionScorer, ScorerConfig
            self._param_count = CrossAttentionScorer(ScorerConfig(native_dim=self.native_dim)).param_count()
        return self._param_count

    def labels(self, session_key: str) -> dict[str, Any]:
        return reports.labels(self.db, session_key)

    def audit(self, session_key: str) -> dict[str, Any]:
        return reports.audit(self.db, session_key)

    def comparisons(self, **filters: Any) -> dict[str, Any]:
        return reports.comparisons(self.db, **filters)

    def comparison(self, comparison_id: str) -> dict[str, Any]:
        return reports.comparison(self.db, comparison_id)

    def training_history(self, limit: int = 50, offset: int = 0) -> dict[str, Any]:
        return reports.training_history(self.db, self.state.model_version, limit=limit, offset=offset)

    def add_calibration(self, session_key: str, memory_id: str, human_label: float) -> dict[str, Any]:
        return reports.add_calibration(self.db, session_key, memory_id, human_label)

    def drift(self) -> dict[str, Any]:
        return reports.drift(self.db, self.state, self.cfg)

    def status(self) -> dict[str, Any]:
        from kenning.predictor.status import build_status
        return build_status(self)
