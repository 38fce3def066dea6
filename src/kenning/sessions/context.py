"""What the session handlers need from the rest of the system, passed in by the service.

`sessions` sits beside `retrieval`, `pipeline` and `memory` in the layer contract and may not
import them, so the service hands over their functions here (effective_score, diversity,
recall, remember, the pipeline's transcript extraction) together with the store, the
embedder, an optional LLM `generate` and a getter for the predictor. One object, built once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from kenning.core.clock import normalize_iso, now_iso
from kenning.core.config_sessions import SessionSettings
from kenning.core.errors import InvalidInput


@dataclass
class SessionDeps:
    db: Any  # kenning.store.db.Database
    settings: SessionSettings
    embedder: Any  # EmbeddingProvider: embed_query(), model_id
    effective_score: Callable[[Any, str], float]  # (Memory, at) -> score
    diversity_select: Callable[..., list]  # retrieval.diversity.diversity_select
    recall: Callable[..., list]  # (query, limit, filters) -> hits with .memory/.score/.legs, no access tracking
    remember: Callable[[Any], Any] | None = None  # (MemoryDraft) -> result with .id / .deduped
    remember_many: Callable[[list], list] | None = None  # [MemoryDraft] -> results, one write tx
    extract: Callable[..., Any] | None = None  # pipeline: (session_key, transcript, project, at) -> summary
    generate: Callable[[str], str] | None = None  # LLM judge; None = heuristic only
    predictor: Callable[[], Any] | None = None  # returns the Predictor (or None) at call time

    def get_predictor(self) -> Any | None:
        return self.predictor() if self.predictor else None


class Deadline:
    """A latency budget: optional stages ask `remaining_ms()` before they start."""

    def __init__(self, budget_ms: float) -> None:
        self.budget_ms = float(budget_ms)
        self.started = time.perf_counter()
        self.cut: list[str] = []
        self.cancelled = False

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000.0

    def remaining_ms(self) -> float:
        return self.budget_ms - self.elapsed_ms()

    def allows(self, stage: str, needs_ms: float) -> bool:
        """True when `needs_ms` still fits; otherwise record the stage as cut."""
        if self.cancelled or self.remaining_ms() < needs_ms:
            self.cut.append(stage)
            return False
        return True


_OPTIONAL_WORK = ThreadPoolExecutor(max_workers=2, thread_name_prefix="hook-optional")


def run_bounded(deadline: Deadline, stage: str, fn: Callable[[], Any], *, reserve_ms: float) -> Any | None:
    """Run optional work for at most the budget left minus `reserve_ms`; None when cut.

    Work that overruns keeps going in the background (an embedding lands in the query cache,
    so the next call is fast); the caller answers without it.
    """
    wait_ms = deadline.remaining_ms() - reserve_ms
    if deadline.cancelled or wait_ms <= 0:
        deadline.cut.append(stage)
        return None
    future = _OPTIONAL_WORK.submit(fn)
    try:
        return future.result(timeout=wait_ms / 1000.0)
    except FutureTimeout:
        deadline.cut.append(stage)
        return None


def resolve_at(timestamp: str | None) -> str:
    """The request's notion of "now": its `timestamp` for replays, else the clock."""
    if timestamp is None or timestamp == "":
        return now_iso()
    if not isinstance(timestamp, str):
        raise InvalidInput("timestamp must be an ISO 8601 string")
    return normalize_iso(timestamp)


def require_key(session_key: Any) -> str:
    if not isinstance(session_key, str) or not session_key.strip():
        raise InvalidInput("session_key must be a non-empty string")
    if len(session_key) > 256:
        raise InvalidInput("session_key is longer than 256 characters")
    return session_key.strip()
