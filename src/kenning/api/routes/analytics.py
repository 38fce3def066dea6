"""/api/analytics/{latency,errors} and /api/logs: what the telemetry rings saw."""

from __future__ import annotations

from fastapi import APIRouter, Query

from kenning.api.schemas import Offset
from kenning.diagnostics import analytics

router = APIRouter(tags=["observability"])


@router.get("/api/analytics/latency")
def latency(
    operation: str | None = Query(None, max_length=100, description="One operation, e.g. recall."),
    since: str | None = Query(None, description="ISO 8601; only samples at or after this time.", min_length=1, json_schema_extra={"format": "date-time"}),
    recent: int = Query(50, ge=0, le=2048, description="How many recent samples to include (sparklines)."),
) -> dict:
    """p50/p95/p99 per operation (remember, recall, hooks, jobs, predictor_score, predictor_train, …)."""
    return {"operations": analytics.latency_report(operation, since, recent)}


@router.get("/api/analytics/errors")
def errors(
    stage: str | None = Query(None, max_length=50, description="extraction, decision, embedding, "
                              "mutation, connector, predictor, …"),
    since: str | None = Query(None, description="ISO 8601 lower bound.", min_length=1, json_schema_extra={"format": "date-time"}),
    limit: int = Query(100, ge=1, le=analytics.MAX_PAGE),
    offset: Offset = 0,
) -> dict:
    """The stage-tagged error ring (500 entries), newest first, with counts per stage."""
    return analytics.error_report(stage, since, limit, offset)


@router.get("/api/logs")
def logs(
    category: str | None = Query(None, max_length=50),
    level: str | None = Query(None, pattern="^(debug|info|warning|error)$"),
    q: str | None = Query(None, max_length=200, description="Case-insensitive text match."),
    since: str | None = Query(None, description="ISO 8601 lower bound.", min_length=1, json_schema_extra={"format": "date-time"}),
    limit: int = Query(100, ge=1, le=analytics.MAX_PAGE),
    offset: Offset = 0,
) -> dict:
    """Structured log events, newest first, filterable by category, level, text and time."""
    return analytics.log_report(category, level, q, since, limit, offset)
