"""The session summary worker: leases `session_summary` jobs from the one job queue.

A session-end queues its summary job in memory_jobs (kenning.sessions.end) and wakes this
worker, so the summary runs right after the answer; a failed summary is retried after the
pipeline's backoff and is dead after `pipeline.worker.max_retries` attempts, and a job whose
daemon died mid-run is re-leased once the lease reaper requeues it — the rules every job of the
queue has. A synchronous session-end (`wait: true`) leases its own job and runs it here through
`run_leased`. Pipeline workers never lease this job type, nor this worker theirs.
"""

from __future__ import annotations

from typing import Unpack

from kenning.sessions.context import SessionDeps
from kenning.sessions.end import summarize
from kenning.store.jobs import Job
from kenning.store.sessions import SUMMARY_JOB
from kenning.workers.base import LeaseOptions, LeaseWorker, backoff_from_settings
from kenning.workers.deps import WorkerDeps


class SummaryWorker(LeaseWorker):
    job_types = (SUMMARY_JOB,)

    def __init__(self, deps: SessionDeps, **kw: Unpack[LeaseOptions]) -> None:
        super().__init__("summaries", deps.db, **kw)
        self.deps = deps

    def handle(self, job: Job) -> dict[str, object] | None:
        key = job.payload.get("session_key") or job.dedup_key
        if not key:
            raise ValueError(f"session_summary job {job.id} names no session")
        return summarize(self.deps, key)


def build(deps: WorkerDeps) -> SummaryWorker:
    worker = deps.settings.pipeline.worker
    return SummaryWorker(deps.sessions, poll_s=worker.poll_ms / 1000.0, max_attempts=worker.max_retries,
                         **backoff_from_settings(worker))
