"""Analytics over the in-process telemetry rings: latency percentiles, error and log queries.

`kenning.core.telemetry` records; this module summarizes and filters for the API, the
dashboard and `kenning doctor`. Pure functions over what telemetry returns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

import numpy as np

from kenning.core import telemetry
from kenning.core.clock import normalize_iso
from kenning.core.errors import InvalidInput

# Operations the dashboard always lists, even before the first sample arrives.
KNOWN_OPERATIONS = (
    "remember", "recall", "mutate", "hooks", "hook.session_start", "hook.user_prompt_submit",
    "hook.session_end", "jobs", "predictor_score", "predictor_train",
)
# Roll-ups: every `job_<type>` sample also counts under "jobs", every `hook.<event>` under "hooks".
AGGREGATES = {"jobs": "job_", "hooks": "hook."}
ERROR_STAGES = ("extraction", "decision", "embedding", "mutation", "connector", "predictor")
MAX_PAGE = 500


class Percentiles(TypedDict):
    count: int
    p50: float | None
    p95: float | None
    p99: float | None
    mean: float | None
    max: float | None


class OperationLatency(Percentiles):
    recent: list[dict[str, object]]  # the last samples: {at, ms}


def percentiles(values: list[float]) -> Percentiles:
    if not values:
        return {"count": 0, "p50": None, "p95": None, "p99": None, "mean": None, "max": None}
    arr = np.asarray(values, dtype=float)
    p50, p95, p99 = np.percentile(arr, [50, 95, 99])
    return {
        "count": int(arr.size),
        "p50": round(float(p50), 3),
        "p95": round(float(p95), 3),
        "p99": round(float(p99), 3),
        "mean": round(float(arr.mean()), 3),
        "max": round(float(arr.max()), 3),
    }


def latency_report(
    operation: str | None = None, since: str | None = None, recent: int = 50
) -> dict[str, OperationLatency]:
    """Per-operation p50/p95/p99 over the latency window, plus the last `recent` samples."""
    since_iso = normalize_iso(since) if since else None
    samples = telemetry.latency_samples(None if operation in AGGREGATES else operation)
    for name, prefix in AGGREGATES.items():
        if operation in (None, name):
            merged = [x for op, rows in samples.items() if op.startswith(prefix) for x in rows]
            samples[name] = sorted(samples.get(name, []) + merged)
    names = [operation] if operation else sorted(set(samples) | set(KNOWN_OPERATIONS))
    out: dict[str, OperationLatency] = {}
    for name in names:
        rows = [(at, ms) for at, ms in samples.get(name, []) if since_iso is None or at >= since_iso]
        out[name] = {**percentiles([ms for _, ms in rows]),
                     "recent": [{"at": at, "ms": round(ms, 3)} for at, ms in rows[-recent:]] if recent else []}
    return out


def _page(items: Sequence[Mapping[str, object]], limit: int, offset: int) -> dict[str, object]:
    if limit < 1 or limit > MAX_PAGE:
        raise InvalidInput(f"limit must be between 1 and {MAX_PAGE}, got {limit}")
    if offset < 0:
        raise InvalidInput(f"offset must be >= 0, got {offset}")
    return {"total": len(items), "limit": limit, "offset": offset, "items": items[offset:offset + limit]}


def error_report(
    stage: str | None = None, since: str | None = None, limit: int = 100, offset: int = 0
) -> dict[str, object]:
    """Newest-first page of the error ring, optionally by stage and time, with per-stage counts."""
    since_iso = normalize_iso(since) if since else None
    everything = telemetry.recent_errors()
    if since_iso:
        everything = [e for e in everything if e["at"] >= since_iso]
    counts: dict[str, int] = {s: 0 for s in ERROR_STAGES}
    for e in everything:
        counts[e["stage"]] = counts.get(e["stage"], 0) + 1
    items = [e for e in everything if stage is None or e["stage"] == stage]
    return _page(items, limit, offset) | {"by_stage": counts}


def log_report(
    category: str | None = None,
    level: str | None = None,
    q: str | None = None,
    since: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> dict[str, object]:
    """Newest-first page of structured logs filtered by category, level, text and time."""
    since_iso = normalize_iso(since) if since else None
    items = telemetry.recent_logs(category=category, level=level, limit=telemetry.LOG_RING_SIZE)
    if since_iso:
        items = [e for e in items if str(e["at"]) >= since_iso]  # at, message, category: log_event's strings
    if q:
        needle = q.lower()
        items = [e for e in items if needle in str(e["message"]).lower() or needle in str(e).lower()]
    categories: dict[str, int] = {}
    for e in telemetry.recent_logs(limit=telemetry.LOG_RING_SIZE):
        categories[str(e["category"])] = categories.get(str(e["category"]), 0) + 1
    return _page(items, limit, offset) | {"categories": categories}
