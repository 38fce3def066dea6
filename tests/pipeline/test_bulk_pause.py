"""Lease workers step aside while a bulk import writes, and resume once it pauses."""

from __future__ import annotations

import time

from kenning.core.activity import BULK_BATCH, HOLD_S
from kenning.core.types import MemoryDraft
from kenning.store import jobs
from kenning.workers.base import BULK_WAIT_REASON, LeaseWorker


class CountingWorker(LeaseWorker):
    job_types = ("test",)

    def handle(self, job):
        return {"done": job.id}


def pending(db) -> int:
    return db.reader().execute("SELECT COUNT(*) FROM memory_jobs WHERE job_type = 'test' AND status = 'pending'").fetchone()[0]


def test_workers_wait_during_a_bulk_import_then_drain(kenning):
    worker = CountingWorker("counting", kenning.db, poll_s=0.05)
    jobs.enqueue(kenning.db, "test", dedup_key="one")
    time.sleep(HOLD_S)  # let any bulk write of the fixture go quiet

    kenning.remember_many([MemoryDraft(content=f"small batch {i}") for i in range(3)])
    worker.run_once()
    assert worker.waiting is None and pending(kenning.db) == 0  # small writes do not pause anyone

    jobs.enqueue(kenning.db, "test", dedup_key="two")
    kenning.remember_many([MemoryDraft(content=f"imported fact number {i}") for i in range(BULK_BATCH)])
    worker.run_once()
    assert worker.waiting == BULK_WAIT_REASON and pending(kenning.db) == 1
    assert worker.stats()["waiting"] == BULK_WAIT_REASON  # visible in worker status

    time.sleep(HOLD_S + 0.1)
    worker.run_once()
    assert worker.waiting is None and pending(kenning.db) == 0
