"""The session summary worker: leases `session_summary` jobs from the one job queue.

A session-end queues its summary job in memory_jobs (kenning.sessions.end) and wakes this
worker, so the summary runs right after the answer; a failed summary is retried after the
pipeline's backoff and is dead after `pipeline.worker.max_retries` attempts, and a job whose
daemon died mid-run is re-leased once the lease reaper requeues it — the rules every job of the
queue has. A synchronous session-end (`wait: true`) leases its own job and runs it here through
`run_leased`. Pipeline workers never lease this job type, nor this worker theirs.

Before the summary, the transcript a harness finishes writing after its session-end hook (GitHub
Copilot CLI) is read again once finished (sessions.late_transcript); while it is still being
written the job is put back (JobDeferred: no attempt spent), at most late_transcript.WAIT_S.
"""

from __future__ import annotations

from typing import Unpack

from kenning.core.clock import now_iso, parse_iso
from kenning.core.errors import InvalidInput
from kenning.sessions.context import SessionDeps
from kenning.sessions.end import summarize
from kenning.sessions.late_transcript import NotSettled, settle
from kenning.store.jobs import Job
from kenning.store.sessions import SUMMARY_JOB
from kenning.workers.base import JobDeferred, LeaseOptions, LeaseWorker, backoff_from_settings
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
        try:
            settle(self.deps, key, waited_s=_age_s(job))
        except NotSettled as late:
            raise JobDeferred(late.delay_s, late.reason) from None
        return {**summarize(self.deps, key)}


def _age_s(job: Job) -> float:
    """Seconds since the job was queued (a job without its time: as if it had waited long enough)."""
    try:
        return (parse_iso(now_iso()) - parse_iso(job.created_at)).total_seconds()
    except InvalidInput:
        return float("inf")


def build(deps: WorkerDeps) -> SummaryWorker:
    worker = deps.settings.pipeline.worker
    return SummaryWorker(deps.sessions, poll_s=worker.poll_ms / 1000.0, max_attempts=worker.max_retries,
                         **backoff_from_settings(worker))
