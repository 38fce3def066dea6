"""What the session handlers need from the rest of the system, passed in by the service.

`sessions` sits beside `retrieval`, `pipeline` and `memory` and does not import them, so the
service hands over their functions here (effective_score, diversity, recall, remember) together
with the store, the embedder, an optional LLM `generate` and the predictor. One object, built
once; every seam is typed by the protocols below (what sessions call, nothing more).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Protocol, TypedDict, TypeVar

import numpy as np

from kenning.core import events
from kenning.core.claims import ClaimCandidate, ClaimVerdict
from kenning.core.clock import normalize_iso, now_iso
from kenning.core.config_sessions import SessionSettings
from kenning.core.errors import InvalidInput
from kenning.core.types import Memory, MemoryDraft, MemoryFilter, Selectable
from kenning.predictor.context import Candidate, ScoringContext
from kenning.predictor.fusion import Fused
from kenning.predictor.session_end import SessionEndOutcome
from kenning.providers.embedding import EmbeddingProvider
from kenning.store.backend import StoreDatabase
from kenning.store.jobs import Job
from kenning.store.sessions import SessionRow


class Hit(Protocol):
    """A recall hit (retrieval.recall.RecallHit)."""
    memory: Memory
    score: float
    legs: dict[str, dict[str, float]]


class Recalled(Protocol):
    """What recall answers (retrieval.recall.Recalled): its hits, best first, and what its BM25 leg
    found in memory content, [(memory_id, bm25 score)] best first (None: the leg did not run)."""
    bm25_matches: list[tuple[str, float]] | None
    def __iter__(self) -> Iterator[Hit]: ...
    def __len__(self) -> int: ...


class RecallFn(Protocol):
    """Hybrid recall without access tracking (the one definition: workers.deps reads it too)."""
    def __call__(self, query: str, *, limit: int, filters: MemoryFilter | None) -> Recalled: ...


class Stored(Protocol):
    """What the write path answers for one memory (memory.write.RememberResult; observer.deps reads it too)."""
    id: str
    deduped: bool


_P = TypeVar("_P", bound=Selectable)
_T = TypeVar("_T")


class DiversitySelect(Protocol):
    """retrieval.diversity.diversity_select: (candidate, adjusted score) in selection order."""
    def __call__(self, items: Sequence[_P], *, limit: int, budget_chars: int | None = None,
                 threshold: float = ..., decay: float = ..., floor: float = ...) -> list[tuple[_P, float]]: ...


class SessionPredictor(Protocol):
    """What sessions ask of the learned scorer (predictor.service.Predictor)."""
    def score(self, context: ScoringContext, candidates: Sequence[Candidate]) -> dict[str, float] | None: ...
    def fuse(self, baseline_ranked_ids: list[str], predictor_scores: dict[str, float] | None, *,
             top_k: int | None = None) -> list[Fused]: ...
    def status_line(self) -> str: ...
    def alpha(self) -> float: ...  # the baseline's weight in the fused order (1: no influence yet)
    def on_session_end(self, session_key: str) -> SessionEndOutcome: ...


class SummaryRunner(Protocol):
    """The worker that runs session_summary jobs from the one job queue (workers.summaries)."""
    worker_id: str
    def wake(self) -> None: ...  # a job was queued: lease it now rather than at the next poll
    def run_leased(self, job: Job) -> Job: ...  # run a job leased under worker_id; the job after


class ClaimGateFn(Protocol):
    """The LLM claim gate (pipeline.claim_gate.ClaimGate): {candidate id: verdict} for the candidates
    it judged with a valid answer; raises on a provider failure."""
    def __call__(self, candidates: list[ClaimCandidate]) -> Mapping[str, ClaimVerdict]: ...


@dataclass
class SessionDeps:
    db: StoreDatabase
    settings: SessionSettings
    embedder: EmbeddingProvider
    effective_score: Callable[[Memory, str], float]  # (memory, at) -> score
    diversity_select: DiversitySelect
    recall: RecallFn
    remember: Callable[[MemoryDraft], Stored] | None = None  # the write path, one memory
    remember_many: Callable[[list[MemoryDraft]], Sequence[Stored]] | None = None  # the write path, one write tx
    generate: Callable[[str], str] | None = None  # LLM judge; None = heuristic only
    predictor: SessionPredictor | None = None
    # the LLM claim gate (pipeline.claim_gate): candidates [{id, text, type, …}] -> {id: {durable, type,
    # confidence, reason}}; None = the offline claim test alone (core.claims)
    claim_gate: ClaimGateFn | None = None


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


def run_bounded(deadline: Deadline, stage: str, fn: Callable[[], _T], *, reserve_ms: float) -> _T | None:
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


def resolve_at(timestamp: object) -> str:
    """The request's notion of "now": its `timestamp` for replays, else the clock. `timestamp` is the
    caller's JSON value (None, an ISO string; anything else is refused)."""
    if timestamp is None or timestamp == "":
        return now_iso()
    if not isinstance(timestamp, str):
        raise InvalidInput("timestamp must be an ISO 8601 string")
    return normalize_iso(timestamp)


def require_key(session_key: object) -> str:
    """The one session-key rule (core.events.session_key); `session_key` is the caller's JSON value."""
    return events.session_key(session_key)


def bare_session(session_key: str, started_at: str = "") -> SessionRow:
    """A session with nothing recorded, for a key the store has no row for (the handlers then read
    None, 0 and `started_at`, "" when unknown)."""
    return {"session_key": session_key, "harness": None, "project": None, "cwd": None, "started_at": started_at,
            "ended_at": None, "status": "active", "prompt_count": 0, "last_checkpoint_at": None, "context": None,
            "status_line": None, "last_prompt_at": None, "prompts_since_checkpoint": 0, "metadata": {},
            "transcript_path": None, "owner": None}
