"""In-process telemetry: latency histograms, a stage-tagged error ring, structured log events.

Every layer records here (it imports nothing internal); the observability API reads it.
Bounded memory: fixed-size rings, no network, no files (the daemon's log handler writes files).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypedDict

from kenning.core.clock import now_iso

LATENCY_WINDOW = 2048
ERROR_RING_SIZE = 500
LOG_RING_SIZE = 2000


class ErrorEntry(TypedDict):
    """One error in the ring: when, the stage that failed, its message, and what the stage added."""

    at: str
    stage: str
    message: str
    context: dict[str, object]  # whatever the stage passed (logged with default=str)


_lock = threading.Lock()
_latencies: dict[str, deque[tuple[str, float]]] = {}
_errors: deque[ErrorEntry] = deque(maxlen=ERROR_RING_SIZE)
_logs: deque[dict[str, object]] = deque(maxlen=LOG_RING_SIZE)
_logger = logging.getLogger("kenning")


def record_latency(operation: str, millis: float) -> None:
    with _lock:
        ring = _latencies.setdefault(operation, deque(maxlen=LATENCY_WINDOW))
        ring.append((now_iso(), float(millis)))


@contextmanager
def timed(operation: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        record_latency(operation, (time.perf_counter() - start) * 1000.0)


def latency_samples(operation: str | None = None) -> dict[str, list[tuple[str, float]]]:
    with _lock:
        if operation is not None:
            return {operation: list(_latencies.get(operation, ()))}
        return {op: list(ring) for op, ring in _latencies.items()}


def record_error(stage: str, message: str, **context: object) -> None:
    entry: ErrorEntry = {"at": now_iso(), "stage": stage, "message": message, "context": context}
    with _lock:
        _errors.append(entry)
    log_event("error", message, level="error", stage=stage, **context)


def recent_errors(stage: str | None = None, limit: int = ERROR_RING_SIZE) -> list[ErrorEntry]:
    with _lock:
        items = [e for e in _errors if stage is None or e["stage"] == stage]
    return items[-limit:][::-1]


def log_event(category: str, message: str, level: str = "info", **fields: object) -> None:
    entry: dict[str, object] = {"at": now_iso(), "level": level, "category": category, "message": message, **fields}
    with _lock:
        _logs.append(entry)
    _logger.log(getattr(logging, level.upper(), logging.INFO), json.dumps(entry, default=str))


def recent_logs(
    category: str | None = None, level: str | None = None, limit: int = 200
) -> list[dict[str, object]]:
    """The newest log entries first: at, level, category, message, then the event's own fields."""
    with _lock:
        items = [
            e for e in _logs
            if (category is None or e["category"] == category) and (level is None or e["level"] == level)
        ]
    return items[-limit:][::-1]


def reset() -> None:
    """Forget everything (tests and `kenning serve` start)."""
    with _lock:
        _latencies.clear()
        _errors.clear()
        _logs.clear()
