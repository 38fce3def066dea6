"""Worker framework: a named loop in a daemon thread, and a lease loop over memory_jobs.

Build a background worker in three steps (memory-pipeline-v2 "Worker Model")::

    from kenning.workers.base import LeaseWorker, JobDeferred

    class HintsWorker(LeaseWorker):
        job_types = ("prospective_index",)

        def handle(self, job):            # runs OUTSIDE any write tx; may call LLMs
            ...                           # raise -> retry with backoff, dead at max attempts
            return {"hints": 5}           # JSON-able result stored on the job

        def blocked_reason(self):         # optional: why no job should be leased right now
            return None                   # e.g. "daily LLM token budget exhausted ..."

    def build(deps: WorkerDeps):          # the service's typed parts; None when disabled
        s = deps.settings.pipeline
        return HintsWorker("hints", deps.db, poll_s=s.hints.poll / 1000,
                           **backoff_from_settings(s.worker))

and name the factory in `kenning.workers.manager.FACTORIES`.

Contract of `Worker` (any periodic loop, e.g. retention, maintenance, the lease reaper):
- `tick()` does one unit of work and returns the seconds until the next tick (None ⇒ the
  worker's interval). An exception is caught at this process boundary, recorded in telemetry
  (`record_error(stage=<name>)`), counted, and the next tick is delayed by exponential backoff
  (1 s base, 30 s cap, ≤ 500 ms jitter by default).
- `start()` / `stop()` are idempotent; `run_once()` runs one tick synchronously (tests, CLI);
  `wake()` cuts the current wait short (the next tick runs now).
- `stats()` returns a JSON-able dict: running, processed, failed, dead, deferred,
  consecutive_failures, last_error, waiting (a reason string or None), timestamps.

`LeaseWorker.tick()` leases ONE job of `job_types` (atomic, see kenning.store.jobs), runs
`handle(job)`, then completes, fails (retry after backoff_delay(job.attempts), dead at
max_attempts) or defers it (`raise JobDeferred(delay_s, reason)`: the attempt is given back).
After a processed job the next tick runs at once (drain); an empty queue waits `poll_s`.

Background work yields to the agent (issue 36): every worker thread runs at a lower OS priority
(nice BACKGROUND_NICE, Linux threads have their own), a lease worker waits while a hook or recall
is in flight or just ended (`core.activity.yield_to_foreground`, at most FOREGROUND_MAX_WAIT_S),
and while the agent is active its jobs take at most BACKGROUND_SHARE of the time (after a job of
t seconds it rests t·(1 - share)/share). `stats()` reports the time yielded, the rests, the
throughput and, per reason, the jobs whose handler skipped work already known (`skipped`).
"""

from __future__ import annotations

import os
import random
import sys
import threading
import time
import traceback
from typing import TypedDict

from kenning.core import telemetry
from kenning.core.activity import (BACKGROUND_NICE, bulk_write_active, foreground_active, lower_priority,
                                   yield_to_foreground)
from kenning.core.clock import now_iso
from kenning.core.config_pipeline import WorkerSettings
from kenning.store import jobs as jobstore
from kenning.store.backend import StoreDatabase
from kenning.store.jobs import Job, backoff_delay


FOREGROUND_MAX_WAIT_S = 1.0  # a job starts after at most this wait, even under a steady stream of requests
BACKGROUND_SHARE = 0.25  # while the agent is active, jobs take at most this share of the time
MAX_REST_S = 2.0


def lower_thread_priority(nice: int = BACKGROUND_NICE) -> bool:
    """Lower the calling thread's OS priority to `nice` (never raise it); False where the OS
    has no per-thread priority (Linux has: setpriority on the thread id)."""
    if not sys.platform.startswith("linux"):
        return False
    return lower_priority(threading.get_native_id(), nice) is not None


class JobDeferred(Exception):
    """Raised by `handle()` to put the job back without spending an attempt."""

    def __init__(self, delay_s: float, reason: str) -> None:
        super().__init__(reason)
        self.delay_s = delay_s
        self.reason = reason


class Backoff(TypedDict, total=False):
    """A worker's retry backoff (Worker's keyword arguments)."""

    backoff_base_s: float
    backoff_cap_s: float
    backoff_jitter_s: float


class LeaseOptions(Backoff, total=False):
    """LeaseWorker's keyword arguments beyond its name and database."""

    job_types: tuple[str, ...] | None
    poll_s: float
    worker_id: str | None
    max_attempts: int | None


def backoff_from_settings(worker_settings: WorkerSettings) -> Backoff:
    """Backoff keyword arguments for Worker/LeaseWorker from `settings.pipeline.worker`."""
    return {
        "backoff_base_s": worker_settings.backoff_base_ms / 1000.0,
        "backoff_cap_s": worker_settings.backoff_cap_ms / 1000.0,
        "backoff_jitter_s": worker_settings.backoff_jitter_ms / 1000.0,
    }


class Worker:
    """A periodic loop in its own daemon thread, startable, stoppable, reporting stats."""

    def __init__(
        self, name: str, *, interval_s: float = 2.0, backoff_base_s: float = 1.0,
        backoff_cap_s: float = 30.0, backoff_jitter_s: float = 0.5,
    ) -> None:
        self.name = name
        self.interval_s = interval_s
        self.backoff_base_s = backoff_base_s
        self.backoff_cap_s = backoff_cap_s
        self.backoff_jitter_s = backoff_jitter_s
        self._rng = random.Random()
        self._stop = threading.Event()
        self._wake = threading.Event()  # set by stop() and wake(): end the wait before the next tick
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.counters: dict[str, int] = {
            "ticks": 0, "processed": 0, "failed": 0, "dead": 0, "deferred": 0, "errors": 0,
        }
        self.consecutive_failures = 0
        self.last_error: str | None = None
        self.last_error_at: str | None = None
        self.last_tick_at: str | None = None
        self.started_at: str | None = None
        self.waiting: str | None = None

    # -- override ----------------------------------------------------------
    def tick(self) -> float | None:
        """One unit of work; return seconds until the next tick (None ⇒ interval_s)."""
        raise NotImplementedError

    def extra_stats(self) -> dict[str, object]:
        """Worker-specific numbers merged into stats()."""
        return {}

    # -- lifecycle -----------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        with self._lock:
            if self.running:
                return
            self._stop.clear()
            self._wake.clear()
            self.started_at = now_iso()
            self._thread = threading.Thread(target=self._loop, name=f"kenning-{self.name}", daemon=True)
            self._thread.start()
        telemetry.log_event("worker", f"{self.name} started", worker=self.name)

    def stop(self, timeout_s: float = 10.0) -> None:
        with self._lock:
            thread = self._thread
            self._stop.set()
            self._wake.set()
        if thread is not None:
            thread.join(timeout_s)
        with self._lock:
            if self._thread is thread:
                self._thread = None
        telemetry.log_event("worker", f"{self.name} stopped", worker=self.name)

    def wake(self) -> None:
        """Run the next tick now instead of after the current wait (e.g. a job was just queued)."""
        self._wake.set()

    def run_once(self) -> float | None:
        """Run one tick in the calling thread, with the same error handling as the loop."""
        return self._guarded_tick()

    # -- internals -----------------------------------------------------------
    def _loop(self) -> None:
        lower_thread_priority()
        while not self._stop.is_set():
            delay = self._guarded_tick()
            self._wake.wait(self.interval_s if delay is None else max(0.0, delay))
            self._wake.clear()

    def _guarded_tick(self) -> float | None:
        self.counters["ticks"] += 1
        self.last_tick_at = now_iso()
        try:
            delay = self.tick()
        except Exception as exc:  # process boundary: log with context, count, back off
            self.consecutive_failures += 1
            self.counters["errors"] += 1
            self._note_error(f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=5))
            return self.failure_delay()
        return delay

    def failure_delay(self) -> float:
        return backoff_delay(
            self.consecutive_failures, base_s=self.backoff_base_s, cap_s=self.backoff_cap_s,
            jitter_s=self.backoff_jitter_s, rng=self._rng,
        )

    def _note_error(self, message: str, trace: str | None = None, **context: object) -> None:
        self.last_error = message
        self.last_error_at = now_iso()
        telemetry.record_error(self.name, message, worker=self.name, trace=trace, **context)

    def stats(self) -> dict[str, object]:
        data: dict[str, object] = {
            "name": self.name,
            "running": self.running,
            "interval_s": self.interval_s,
            **self.counters,
            "consecutive_failures": self.consecutive_failures,
            "last_error": self.last_error,
            "last_error_at": self.last_error_at,
            "last_tick_at": self.last_tick_at,
            "started_at": self.started_at,
            "waiting": self.waiting,
        }
        data.update(self.extra_stats())
        return data


BULK_WAIT_REASON = "a bulk import is writing; jobs resume when it pauses"


class LeaseWorker(Worker):
    """Leases one job of `job_types` per tick from memory_jobs and runs `handle(job)`."""

    job_types: tuple[str, ...] = ()

    def __init__(
        self, name: str, db: StoreDatabase, *, job_types: tuple[str, ...] | None = None,
        poll_s: float = 2.0, worker_id: str | None = None, max_attempts: int | None = None,
        **backoff: float,
    ) -> None:
        super().__init__(name, interval_s=poll_s, **backoff)
        self.db = db
        self.max_attempts = max_attempts  # overrides each job's own max_attempts when set
        if job_types is not None:
            self.job_types = tuple(job_types)
        if not self.job_types:
            raise ValueError(f"worker {name!r} has no job_types")
        self.worker_id = worker_id or f"{name}:{os.getpid()}:{id(self):x}"
        self.current_job: int | None = None
        self.last_job_at: str | None = None
        self.yielded_s = 0.0  # waited for the agent's requests before leasing
        self.rested_s = 0.0  # rested after jobs to keep within BACKGROUND_SHARE
        self.busy_s = 0.0  # spent in jobs
        self.skipped: dict[str, int] = {}  # jobs whose handler found the result already known, by reason

    # -- override ----------------------------------------------------------
    def handle(self, job: Job) -> dict[str, object] | None:
        """Process one leased job. Raise to fail it; raise JobDeferred to give it back."""
        raise NotImplementedError

    def blocked_reason(self) -> str | None:
        """A human reason not to lease now (budget exhausted, provider down), or None."""
        return None

    # -- the lease loop ------------------------------------------------------
    def tick(self) -> float | None:
        reason = BULK_WAIT_REASON if bulk_write_active() else self.blocked_reason()
        self.waiting = reason
        if reason is not None:
            return self.interval_s
        self.yielded_s += yield_to_foreground(FOREGROUND_MAX_WAIT_S, self._stop)
        job = jobstore.lease(self.db, self.job_types, self.worker_id)
        if job is None:
            return self.interval_s
        self.current_job = job.id
        started = time.perf_counter()
        delay: float | None = None
        try:
            delay = self._run_job(job)
            return delay
        finally:
            elapsed = time.perf_counter() - started
            self.busy_s += elapsed
            self.current_job = None
            self.last_job_at = now_iso()
            telemetry.record_latency(f"job_{job.job_type}", elapsed * 1000.0)
            if delay == 0.0 and foreground_active():  # the agent is active: keep to the background share
                rest = min(MAX_REST_S, elapsed * (1 - BACKGROUND_SHARE) / BACKGROUND_SHARE)
                self.rested_s += rest
                self._stop.wait(rest)

    def run_leased(self, job: Job) -> Job:
        """Run a job the caller leased under this worker's id, in the caller's thread, with the
        loop's rules (complete, or fail with backoff / dead at max attempts); the job after."""
        self._run_job(job)
        return jobstore.get_job(self.db, job.id) or job

    def _run_job(self, job: Job) -> float | None:
        try:
            result = self.handle(job)
        except JobDeferred as deferral:
            jobstore.defer(self.db, job.id, deferral.delay_s, deferral.reason, worker_id=self.worker_id)
            self.counters["deferred"] += 1
            self.waiting = deferral.reason
            return max(self.interval_s, min(deferral.delay_s, 60.0))
        except Exception as exc:  # process boundary: the job records it, the loop backs off
            return self._job_failed(job, exc)
        jobstore.complete(self.db, job.id, result or {}, worker_id=self.worker_id)
        self.counters["processed"] += 1
        skipped = (result or {}).get("skipped")
        if isinstance(skipped, str):
            reason = skipped.split(" (", 1)[0]  # the reason without its particulars (an id)
            self.skipped[reason] = self.skipped.get(reason, 0) + 1
        self.consecutive_failures = 0
        return 0.0

    def _job_failed(self, job: Job, exc: Exception) -> float:
        message = f"{type(exc).__name__}: {exc}"
        retry = backoff_delay(
            job.attempts, base_s=self.backoff_base_s, cap_s=self.backoff_cap_s,
            jitter_s=self.backoff_jitter_s, rng=self._rng,
        )
        status = jobstore.fail(self.db, job.id, message, retry_delay_s=retry, worker_id=self.worker_id,
                               max_attempts=self.max_attempts)
        self.counters["failed"] += 1
        if status == "dead":
            self.counters["dead"] += 1
        self.consecutive_failures += 1
        self._note_error(message, traceback.format_exc(limit=5), job_id=job.id,
                         job_type=job.job_type, attempts=job.attempts, status=status)
        return self.failure_delay()

    def extra_stats(self) -> dict[str, object]:
        processed = self.counters["processed"]
        return {"job_types": list(self.job_types), "current_job": self.current_job,
                "last_job_at": self.last_job_at, "worker_id": self.worker_id,
                "busy_s": round(self.busy_s, 2), "yielded_s": round(self.yielded_s, 2),
                "rested_s": round(self.rested_s, 2), "skipped": dict(self.skipped),
                "jobs_per_busy_s": round(processed / self.busy_s, 1) if self.busy_s else None}


class LeaseReaper(Worker):
    """Resets leases older than `lease_timeout_ms` to pending (dead at max attempts)."""

    def __init__(self, db: StoreDatabase, *, lease_timeout_ms: int, interval_s: float = 60.0,
                 name: str = "lease-reaper") -> None:
        super().__init__(name, interval_s=interval_s)
        self.db = db
        self.lease_timeout_ms = lease_timeout_ms
        self.reaped = 0
        self.reaped_dead = 0

    def tick(self) -> float | None:
        outcome = jobstore.reap_stale(self.db, self.lease_timeout_ms)
        if outcome["requeued"] or outcome["dead"]:
            self.reaped += outcome["requeued"]
            self.reaped_dead += outcome["dead"]
            telemetry.log_event("worker", "stale leases reaped", level="warning", **outcome)
        self.counters["processed"] += outcome["requeued"] + outcome["dead"]
        return None

    def extra_stats(self) -> dict[str, object]:
        return {"reaped": self.reaped, "reaped_dead": self.reaped_dead,
                "lease_timeout_ms": self.lease_timeout_ms}
