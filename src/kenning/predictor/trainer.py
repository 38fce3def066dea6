"""Training orchestration on the daemon's side: when to train, the canary set, the drift signal,
and recording what the sidecar's `train_from_db` answered (swap or not, gates, α state).

The training itself (epochs, validation gates, the swap) runs in the sidecar (`train.py`,
in a fit process); this part only asks for it. Training is due every `train_interval_sessions`
completed sessions, after a drift reset, and the first time training becomes possible (which
also spawns the sidecar); a manual train spawns it regardless. A due run waits for the agents to
pause (no hook or recall for core.activity.BURST_OVER_S, at most TRAIN_DEFER_MAX_S): a burst of agents and a fit
process do not share the machine (issue 36).
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import cast

from kenning.core import activity, heap, telemetry
from kenning.core.clock import now_iso, to_iso, utcnow
from kenning.core.config_predictor import PredictorSettings
from kenning.predictor import alpha as A
from kenning.predictor import constants as C
from kenning.predictor.client import SidecarError
from kenning.predictor.lifecycle import Sidecar
from kenning.predictor.protocol import TrainReply
from kenning.store import predictor as store
from kenning.store.backend import StoreDatabase


class Trainer:
    def __init__(self, cfg: PredictorSettings, db: StoreDatabase, sidecar: Sidecar, alpha: A.AlphaCell) -> None:
        self.cfg = cfg
        self.db = db
        self.sidecar = sidecar
        self.cell = alpha
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.waiting_since: str | None = None  # when a due run began waiting for the agents to pause
        self.quiet_s, self.defer_max_s = activity.BURST_OVER_S, C.TRAIN_DEFER_MAX_S

    # -- when ------------------------------------------------------------------------
    def after_session(self, sessions_completed: int, update: A.SessionUpdate) -> bool:
        """Train when due after a recorded session; True when a run was started."""
        drift = "drift_reset" in update.events
        due = sessions_completed % self.cfg.train_interval_sessions == 0 or drift
        sidecar = self.sidecar
        if sidecar.client is None and self.cfg.enabled and sidecar.training_possible():
            sidecar.start()  # the first time training is possible: spawn, and train right away
            due = sidecar.client is not None
        if not due:
            return False
        self.record_drift_signal()
        return self.train_async("drift_reset" if drift else "interval")

    def record_drift_signal(self) -> None:
        since = to_iso(utcnow() - timedelta(days=30))
        row = store.relevance_by_memory_age(self.db.reader(), since)
        signal = None
        if row.recent_avg is not None and row.old_avg is not None:
            signal = row.recent_avg - row.old_avg
        with self.db.with_write_tx() as conn:
            store.insert_drift_signal(conn, signal, row.recent_avg, row.old_avg, row.samples or 0)

    # -- running -----------------------------------------------------------------------
    def train_async(self, trigger: str) -> bool:
        """Start a training run in the background; False when one is running or no sidecar is up."""
        client = self.sidecar.client
        if client is None or client.disabled:
            return False
        with self._lock:
            if self.in_progress():
                return False
            self._thread = threading.Thread(target=self._train_quietly, args=(trigger,), daemon=True,
                                            name="predictor-train")
            self._thread.start()
            return True

    def in_progress(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def wait(self, timeout_s: float) -> bool:
        """Wait for a background run to finish; True when none is running any more."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout=timeout_s)
        return not self.in_progress()

    def _train_quietly(self, trigger: str) -> None:
        """A due run waits for the agents to pause (core.activity.BURST_OVER_S), at most
        TRAIN_DEFER_MAX_S; a stop meanwhile cancels it. A manual run starts at once."""
        try:
            if trigger != "manual":
                self.waiting_since = now_iso()
                try:
                    waited = activity.yield_to_foreground(self.defer_max_s, self._stop, quiet_s=self.quiet_s,
                                                          poll_s=1.0)
                finally:
                    self.waiting_since = None
                if self._stop.is_set():
                    return
                if waited >= 1.0:
                    telemetry.log_event("predictor", "predictor.train_deferred", trigger=trigger,
                                        waited_s=round(waited, 1))
            self.train_now(trigger)
        except Exception as exc:  # background thread boundary
            telemetry.record_error("predictor", f"predictor_train_failure: {exc}", trigger=trigger)

    def cancel(self) -> None:
        """Cancel a run still waiting for quiet (the daemon stops); one that runs goes on."""
        self._stop.set()

    def refresh_canary(self) -> list[str]:
        """The canary sessions the gates validate on: the most confident ones, refreshed when stale."""
        conn = self.db.reader()
        current = store.canary_rows(conn)
        lag = store.canary_lag_days(conn)  # session time: a replay or a busy week moves it too
        stale = not current or min(r.added_at for r in current) < to_iso(
            utcnow() - timedelta(days=C.CANARY_REFRESH_DAYS)) or (lag is not None and lag > C.CANARY_REFRESH_DAYS)
        if stale or len(current) < C.CANARY_SIZE:
            best = store.canary_candidates(conn, C.MIN_SCORER_CONFIDENCE, C.CANARY_SIZE)
            if [r["session_key"] for r in best] != [r.session_key for r in current]:
                with self.db.with_write_tx() as wconn:
                    store.replace_canary(wconn, [(r["session_key"], r["confidence"]) for r in best])
                current = store.canary_rows(self.db.reader())
        return [r.session_key for r in current]

    def train_now(self, trigger: str = "manual", timeout_s: float = C.TRAIN_TIME_CAP_S + 90) -> dict[str, object]:
        """Run train_from_db in the sidecar, log the outcome; returns the training summary."""
        if self.sidecar.client is None and self.cfg.enabled:
            self.sidecar.start(force=True)  # a training request is reason enough to run the sidecar
        client = self.sidecar.client
        if client is None:
            raise SidecarError("predictor is not running (disabled in config)")
        if not client.ready:
            client.wait_ready(client.ready_timeout_s)
        canary = self.refresh_canary()
        heap.release()  # the fit process is about to take its share: hand back what this daemon freed
        started = time.perf_counter()
        error = None
        try:
            result = cast(TrainReply, client.call("train_from_db", {"canary_keys": canary, "trigger": trigger}, timeout_s))
        except (SidecarError, TimeoutError) as exc:
            result, error = {}, str(exc)
        duration = (time.perf_counter() - started) * 1000.0
        telemetry.record_latency("predictor_train", duration)
        swapped = bool(result.get("swapped"))
        previous = store.list_training_log(self.db.reader(), limit=1)[0]
        failures = (previous[0]["train_validation_failures"] if previous else 0) + (0 if swapped or error else 1)
        canary_metrics = result.get("canary") or {}
        cell = self.cell
        with cell.lock:
            state = cell.state
            new_state = A.record_training(state, swapped=swapped,
                                          model_version=int(result.get("model_version") or state.model_version),
                                          at=now_iso(), trained_through=result.get("trained_through"))
            events: list[str] = []
            A.maybe_exit_cold_start(new_state, self.cfg.min_training_sessions, events)
            with self.db.with_write_tx() as conn:
                log_id = store.insert_training_log(conn, {
                    "model_version": int(result.get("model_version") or state.model_version),
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
                store.save_state(conn, A.STATE_KEY, new_state.to_dict())
            cell.state = new_state
        level = "info" if swapped else "warning"
        telemetry.log_event("predictor", "predictor.train", level=level, trigger=trigger, swapped=swapped,
                            loss=result.get("loss"), steps=result.get("steps"), duration_ms=round(duration, 1),
                            model_version=new_state.model_version, error=error or result.get("error"))
        if not swapped:
            telemetry.record_error("predictor", f"predictor_train_failure: {error or result.get('error')}",
                                   trigger=trigger)
        return {"log_id": log_id, "trigger": trigger, "error": error, **result}
