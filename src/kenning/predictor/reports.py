"""What the predictor has recorded, read for the API, the CLI and the dashboard: a session's labels
and audit, the comparisons, the training log, drift, and the judge's calibration set.

`predictor.service.Predictor` delegates its read methods here.
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import timedelta
from typing import TypedDict, Unpack

from kenning.core.clock import to_iso, utcnow
from kenning.core.config_predictor import PredictorSettings
from kenning.core.errors import InvalidInput, NotFound
from kenning.predictor import constants as C
from kenning.predictor.alpha import AlphaState
from kenning.predictor.features import session_labels
from kenning.predictor.labels import SessionLabelsJson
from kenning.store import predictor as store
from kenning.store.backend import StoreDatabase


class ComparisonFilters(TypedDict, total=False):
    """store.predictor.list_comparisons's filters (the API's query parameters)."""

    winner: str | None
    ema_updated: bool | None
    min_margin: float | None
    since: str | None
    until: str | None
    limit: int
    offset: int


class ComparisonsPage(TypedDict):
    items: list[store.Comparison]
    total: int
    limit: int
    offset: int


class TrainingHistory(TypedDict):
    items: list[store.TrainingLogEntry]
    total: int
    limit: int
    offset: int
    drift_resets: list[dict[str, object]]  # store.predictor.DriftReset's fields
    model_version: int


class DriftReport(TypedDict):
    drift_signal: float | None
    recent_avg: float | None
    old_avg: float | None
    samples: int
    history: list[dict[str, object]]  # store.predictor.DriftSignal's fields
    drift_resets: int
    resets: list[dict[str, object]]  # store.predictor.DriftReset's fields
    low_streak: int
    threshold: float
    window: int
    success_rate: float


class AuditReport(TypedDict, total=False):
    """What was recorded for one session: its candidates, context, comparison, score and labels."""

    session_key: str
    candidates: list[dict[str, object]]
    context: dict[str, object] | None  # a SessionContextRow without its embedding (bytes)
    comparison: store.Comparison | None
    session_score: store.ScoredSession | None
    continuity_reasoning: str | None
    labels: SessionLabelsJson
    confidence_gate_passed: bool
    fts_only: list[object]
    pools: dict[str, list[store.RecordedPoolRow]]


def labels(db: StoreDatabase, session_key: str) -> SessionLabelsJson:
    conn = db.reader()
    session = store.session_score(conn, session_key)
    if session is None:
        raise NotFound(f"no scored session {session_key!r} (labels need session_scores)")
    labels, rows, _, _, _ = session_labels(conn, session, store.embedding_model_in_use(conn))
    out = labels.to_dict()
    by_id = {r["memory_id"]: r for r in rows}
    touched = store.touched_ids(conn, session_key)
    for item in out["labels"]:
        memory_id = str(item["memory_id"])
        r = by_id[memory_id]
        item.update(was_injected=bool(r["was_injected"]), relevance_score=r["relevance_score"],
                    agent_relevance_score=r["agent_relevance_score"],
                    agent_feedback_count=r["agent_feedback_count"], fts_hit_count=r["fts_hit_count"],
                    touched=touched.get(memory_id))
    return out


def audit(db: StoreDatabase, session_key: str) -> AuditReport:
    conn = db.reader()
    rows = store.session_audit_rows(conn, session_key)
    if not rows:
        raise NotFound(f"no candidates recorded for session {session_key!r}")
    session = store.session_score(conn, session_key)
    out: AuditReport = {
        "session_key": session_key, "candidates": rows, "context": None,
        "comparison": store.comparison_for_session(conn, session_key), "session_score": session,
    }
    ctx = store.session_context(conn, session_key)
    if ctx:
        out["context"] = {k: v for k, v in ctx.items() if k != "embedding"}
    if session:
        out["continuity_reasoning"] = store.continuity_reasoning(conn, session_key)
        out["labels"] = labels(db, session_key)
        out["confidence_gate_passed"] = out["labels"]["confidence"] >= C.MIN_SCORER_CONFIDENCE
    out["fts_only"] = [r["memory_id"] for r in rows if r["source"] == "fts_only"]
    out["pools"] = store.pools(conn, session_key)  # later pools (the first prompt's), ranked
    return out


def comparisons(db: StoreDatabase, **filters: Unpack[ComparisonFilters]) -> ComparisonsPage:
    rows, total = store.list_comparisons(db.reader(), **filters)
    return {"items": rows, "total": total, "limit": filters.get("limit", 50), "offset": filters.get("offset", 0)}


def comparison(db: StoreDatabase, comparison_id: str) -> dict[str, object]:
    conn = db.reader()
    row = store.get_comparison(conn, comparison_id)
    if row is None:
        raise NotFound(f"no predictor comparison {comparison_id!r}")
    return {**row, "candidates": store.session_audit_rows(conn, row["session_key"]),
            "continuity_reasoning": store.continuity_reasoning(conn, row["session_key"])}


def training_history(db: StoreDatabase, model_version: int, *, limit: int = 50, offset: int = 0) -> TrainingHistory:
    conn = db.reader()
    rows, total = store.list_training_log(conn, limit=limit, offset=offset)
    return {"items": rows, "total": total, "limit": limit, "offset": offset,
            "drift_resets": [asdict(r) for r in store.drift_resets(conn)], "model_version": model_version}


def add_calibration(db: StoreDatabase, session_key: str, memory_id: str, human_label: float) -> dict[str, object]:
    """A human's relevance label for one judged memory (judge calibration set)."""
    if not -1.0 <= human_label <= 1.0:
        raise InvalidInput("human_label must be within [-1, 1]")
    with db.with_write_tx() as conn:
        row = store.upsert_calibration(conn, session_key, memory_id, human_label)
    return {**row, "summary": asdict(store.calibration_summary(db.reader()))}


def drift(db: StoreDatabase, state: AlphaState, cfg: PredictorSettings) -> DriftReport:
    conn = db.reader()
    now = store.relevance_by_memory_age(conn, to_iso(utcnow() - timedelta(days=30)))
    signal = now.recent_avg - now.old_avg if now.recent_avg is not None and now.old_avg is not None else None
    return {"drift_signal": signal, "recent_avg": now.recent_avg, "old_avg": now.old_avg,
            "samples": now.samples, "history": [asdict(d) for d in store.list_drift_signals(conn)],
            "drift_resets": state.drift_resets, "resets": [asdict(r) for r in store.drift_resets(conn)],
            "low_streak": state.low_streak, "threshold": C.DRIFT_RESET_THRESHOLD,
            "window": cfg.drift_reset_window, "success_rate": state.success_rate}
