"""The predictor's status: the one-line status at session start, the status report and the
health score (scorer seed §4.1)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict

import numpy as np

from kenning.core import telemetry
from kenning.core.config_predictor import PredictorSettings
from kenning.predictor import alpha as A
from kenning.predictor import constants as C
from kenning.predictor.client import SidecarClient
from kenning.predictor.lifecycle import Sidecar
from kenning.store import predictor as store
from kenning.store.backend import StoreDatabase


def _percentiles(operation: str) -> dict[str, float | None]:
    samples = [ms for _, ms in telemetry.latency_samples(operation).get(operation, [])]
    if not samples:
        return {"p50": None, "p95": None, "count": 0}
    arr = np.asarray(samples)
    return {"p50": float(np.percentile(arr, 50)), "p95": float(np.percentile(arr, 95)), "count": len(samples)}


def sidecar_verdict(enabled: bool, sidecar: Mapping[str, object] | None) -> tuple[str, str] | None:
    """(status, why) for a predictor that cannot serve, None when its sidecar is up.

    The one rule behind both GET /api/predictor/status's `health` and the doctor's predictor
    domain, so they never disagree: off in config is `disabled` (the user's choice,
    informational); not started yet for want of usable sessions is `cold_start`; enabled but
    disabled by the crash threshold, or not running, is `unhealthy` (red)."""
    side = sidecar or {}
    if not enabled:
        return "disabled", "predictor disabled in config; baseline ranking only"
    if side.get("waiting"):
        return "cold_start", str(side["waiting"])
    if side.get("disabled"):
        return "unhealthy", "disabled after repeated crashes (crash threshold hit)"
    if side.get("running") is False:
        return "unhealthy", "sidecar not running"
    return None


def mode(cfg: PredictorSettings, state: A.AlphaState, client: SidecarClient | None) -> str:
    if not cfg.enabled:
        return "disabled"
    if client is not None and client.disabled:
        return "crash_disabled"
    if state.retraining:
        return "retraining"
    if not state.first_training_done:
        return "collecting"
    if not state.cold_start_exited:
        return "warming"
    return "active"


def health(cfg: PredictorSettings, state: A.AlphaState, sidecar: Mapping[str, object], latency: Mapping[str, float | None],
           calibration_flag: bool, drift_flag: bool) -> tuple[float, str, str | None]:
    """(score, status, why): `sidecar_verdict` first, then the model's own record."""
    verdict = sidecar_verdict(cfg.enabled, sidecar)
    if verdict is not None:
        return (0.6 if verdict[0] == "cold_start" else 0.0), verdict[0], verdict[1]
    if not state.cold_start_exited:
        score, status = 0.6, "cold_start"
    elif state.success_rate > C.COLD_START_MIN_SUCCESS:
        score, status = min(1.0, 0.8 + (state.success_rate - C.COLD_START_MIN_SUCCESS) / 3), "healthy"
    else:
        score, status = 0.6, "degraded"
    if latency["p95"] is not None and latency["p95"] > cfg.score_timeout_ms:
        score -= 0.2
    if calibration_flag or drift_flag:
        score -= 0.1
    score = max(0.0, score)
    if status in ("healthy", "degraded"):
        status = "healthy" if score >= 0.8 else ("degraded" if score >= 0.5 else "unhealthy")
    return round(score, 3), status, None


def status_line(cfg: PredictorSettings, db: StoreDatabase, state: A.AlphaState, client: SidecarClient | None,
                alpha: float) -> str:
    """The one-line predictor status appended at session start."""
    return A.status_line(
        state, alpha=alpha, enabled=cfg.enabled,
        crash_disabled=bool(client and client.disabled),
        crashes_last_hour=client.crashes_last_hour() if client else 0,
        min_training_sessions=cfg.min_training_sessions,
        scored_sessions=store.count_usable_sessions(db.reader()),
    )


def build_status(cfg: PredictorSettings, db: StoreDatabase, state: A.AlphaState, sidecar: Sidecar, *,
                 alpha: float, training_in_progress: bool, training_waiting_since: str | None = None) -> dict[str, object]:
    conn = db.reader()
    client = sidecar.client
    usable = store.count_usable_sessions(conn)
    side = client.state() if client is not None else {
        "running": False, "disabled": False,
        "waiting": f"starts once {cfg.min_training_sessions} usable sessions exist ({usable} so far)"}
    latency = _percentiles("predictor_score")
    calibration = store.calibration_summary(conn)
    calibration_flag = calibration.mae is not None and calibration.mae > C.CALIBRATION_MAE_THRESHOLD
    drift_rows = store.list_drift_signals(conn, limit=1)
    drift_signal = drift_rows[0].drift_signal if drift_rows else None
    last_log, _ = store.list_training_log(conn, limit=1)
    last = last_log[0] if last_log else None
    score, status, why = health(cfg, state, side, latency, calibration_flag,
                                bool(drift_signal and abs(drift_signal) > 0.2))
    s = state
    top_projects = sorted(s.project_counts, key=lambda k: -s.project_counts[k])[:3]
    return {
        "enabled": cfg.enabled, "mode": mode(cfg, state, client),
        "status_line": status_line(cfg, db, state, client, alpha),
        "alpha": alpha, "success_rate": s.success_rate, "model_version": s.model_version,
        "param_count": sidecar.param_count(), "native_dim": sidecar.native_dim,
        "training_sessions": usable,
        "min_training_sessions": cfg.min_training_sessions,
        "sessions_completed": s.sessions_completed, "comparisons": s.comparisons,
        "first_training_done": s.first_training_done, "cold_start_exited": s.cold_start_exited,
        "sessions_since_exit": s.sessions_since_exit, "retraining": s.retraining,
        "last_trained_at": s.last_trained_at, "last_train_loss": last["loss"] if last else None,
        "last_training": last, "drift_resets": s.drift_resets, "scorer_drift_signal": drift_signal,
        "project_success_rates": {k: s.project_rates.get(k) for k in top_projects},
        "all_project_success_rates": dict(s.project_rates),
        "calibration": {**asdict(calibration), "threshold": C.CALIBRATION_MAE_THRESHOLD, "flagged": calibration_flag},
        "sidecar": side, "latency_ms": latency,
        "health": {"score": score, "status": status, "reason": why},
        "checkpoint": str(sidecar.checkpoint_path) if sidecar.checkpoint_path.exists() else None,
        "config": cfg.model_dump(),
        "training_in_progress": training_in_progress,
        # a due run waiting for the agents to pause (trainer.py): since when, None when none waits
        "training_waiting_since": training_waiting_since,
    }
