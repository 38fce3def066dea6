"""memory_jobs and the worker framework on a real SQLite file: lease, retry, dead, reaper."""

from __future__ import annotations

import random
import subprocess
import sys
import threading

import pytest
from pipeline_helpers import run_until

from kenning.store import jobs
from kenning.workers.base import JobDeferred, LeaseReaper, LeaseWorker

FAST = {"backoff_base_s": 0.01, "backoff_cap_s": 0.05, "backoff_jitter_s": 0.005}


class ScriptedWorker(LeaseWorker):
    job_types = ("test",)

    def handle(self, job):
        action = job.payload.get("do")
        if action == "fail":
            raise RuntimeError("always fails")
        if action == "defer" and job.payload.get("times", 1) > self.counters["deferred"]:
            raise JobDeferred(0.0, "waiting on something")
        return {"done": job.id}


def test_enqueue_dedups_live_jobs_only(db):
    first, created = jobs.enqueue(db, "extract", memory_id="m1")
    again, created_again = jobs.enqueue(db, "extract", memory_id="m1")
    assert created and not created_again and again == first
    assert jobs.enqueue(db, "hints", memory_id="m1")[1] is True  # other job type
    job = jobs.lease(db, ["extract"], "w")
    jobs.complete(db, job.id, {"ok": 1}, worker_id="w")
    assert jobs.enqueue(db, "extract", memory_id="m1")[1] is True  # completed ⇒ may run again


def test_concurrent_leases_never_share_a_job(db):
    for i in range(60):
        jobs.enqueue(db, "test", dedup_key=f"k{i}")
    taken: list[int] = []
    lock = threading.Lock()

    def grab(worker: str) -> None:
        while (job := jobs.lease(db, ["test"], worker)) is not None:
            with lock:
                taken.append(job.id)

    threads = [threading.Thread(target=grab, args=(f"w{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == sorted(set(taken)) and len(taken) == 60


def test_backoff_schedule_base_cap_and_jitter():
    rng = random.Random(7)
    for failures, low in ((1, 1.0), (2, 2.0), (3, 4.0), (5, 16.0), (6, 30.0), (40, 30.0)):
        delay = jobs.backoff_delay(failures, rng=rng)
        assert low <= delay <= low + 0.5
    assert jobs.backoff_delay(0) == 0.0


def test_always_failing_job_ends_dead_after_max_attempts(db):
    job_id, _ = jobs.enqueue(db, "test", dedup_key="bad", payload={"do": "fail"}, max_attempts=3)
    worker = ScriptedWorker("scripted", db, poll_s=0.02, **FAST)
    worker.start()
    try:
        assert run_until(lambda: jobs.get_job(db, job_id).status == "dead")
    finally:
        worker.stop()
    job = jobs.get_job(db, job_id)
    assert job.attempts == 3 and "always fails" in job.last_error and job.failed_at
    assert worker.stats()["dead"] == 1 and worker.stats()["failed"] == 3
    assert jobs.queue_depths(db)["test"]["dead"] == 1


def test_failed_job_waits_for_its_backoff_before_retry(db):
    job_id, _ = jobs.enqueue(db, "test", dedup_key="once", payload={"do": "fail"}, max_attempts=5)
    worker = ScriptedWorker("scripted", db, poll_s=0.02, backoff_base_s=60.0, backoff_cap_s=60.0,
                            backoff_jitter_s=0.0)
    worker.run_once()
    job = jobs.get_job(db, job_id)
    assert job.status == "pending" and job.run_after > job.updated_at
    assert jobs.lease(db, ["test"], "other") is None  # not ready for a minute


def test_deferred_job_keeps_its_attempts(db):
    job_id, _ = jobs.enqueue(db, "test", dedup_key="d", payload={"do": "defer", "times": 2})
    worker = ScriptedWorker("scripted", db, poll_s=0.01, **FAST)
    for _ in range(3):
        worker.run_once()
    job = jobs.get_job(db, job_id)
    assert job.status == "completed" and job.attempts == 1 and worker.stats()["deferred"] == 2


KILLED_WORKER = """
import os, sys
from kenning.store.factory import open_location
from kenning.store import jobs
db = open_location(sys.argv[1])
job = jobs.lease(db, ["test"], "doomed-worker")
print(job.id, flush=True)
os.kill(os.getpid(), 9)
"""


def test_killed_workers_lease_is_reaped_and_the_job_completes(db, tmp_path):
    job_id, _ = jobs.enqueue(db, "test", dedup_key="victim")
    location = db.url if db.backend == "postgres" else str(db.path)
    proc = subprocess.run([sys.executable, "-c", KILLED_WORKER, location], capture_output=True, text=True)
    assert proc.returncode == -9 and int(proc.stdout.split()[0]) == job_id
    assert jobs.get_job(db, job_id).status == "leased"
    reaper = LeaseReaper(db, lease_timeout_ms=200, interval_s=0.05)
    worker = ScriptedWorker("scripted", db, poll_s=0.02, **FAST)
    reaper.start()
    worker.start()
    try:
        assert run_until(lambda: jobs.get_job(db, job_id).status == "completed")
    finally:
        worker.stop()
        reaper.stop()
    job = jobs.get_job(db, job_id)
    assert job.attempts == 2 and job.result == {"done": job_id}
    assert reaper.stats()["reaped"] == 1


def test_reaper_buries_a_lease_that_expired_at_max_attempts(db):
    job_id, _ = jobs.enqueue(db, "test", dedup_key="x", max_attempts=1)
    jobs.lease(db, ["test"], "gone")
    assert jobs.reap_stale(db, lease_timeout_ms=0) == {"requeued": 0, "dead": 1}
    assert jobs.get_job(db, job_id).status == "dead"
    assert jobs.requeue_dead(db) == 1 and jobs.get_job(db, job_id).status == "pending"


def test_lost_lease_cannot_be_completed_by_the_old_worker(db):
    job_id, _ = jobs.enqueue(db, "test", dedup_key="y")
    jobs.lease(db, ["test"], "slow")
    jobs.reap_stale(db, lease_timeout_ms=0)
    jobs.lease(db, ["test"], "fresh")
    assert jobs.complete(db, job_id, {"by": "slow"}, worker_id="slow") is False
    assert jobs.complete(db, job_id, {"by": "fresh"}, worker_id="fresh") is True
    assert jobs.get_job(db, job_id).result == {"by": "fresh"}


def test_purge_old_completed_and_dead_jobs(db):
    done, _ = jobs.enqueue(db, "test", dedup_key="a")
    jobs.lease(db, ["test"], "w")
    jobs.complete(db, done, {}, worker_id="w")
    assert jobs.purge_jobs(db, "completed", older_than="9999-01-01T00:00:00.000Z") == 1
    with pytest.raises(ValueError):
        jobs.purge_jobs(db, "pending", older_than="9999")


def test_a_lease_takes_the_oldest_ready_job_of_the_highest_priority_without_sorting_the_backlog(db):
    ids = [jobs.enqueue(db, "extract", memory_id=f"m{i}", priority=1 if i in (3, 5) else 0)[0] for i in range(8)]
    later, _ = jobs.enqueue(db, "extract", memory_id="later", priority=2, delay_s=3600)  # not ready yet
    order = [jobs.lease(db, ["extract"], "w").id for _ in range(8)]
    assert order == [ids[3], ids[5], ids[0], ids[1], ids[2], ids[4], ids[6], ids[7]]
    assert jobs.lease(db, ["extract"], "w") is None and later not in order
    if db.backend == "postgres":
        return  # its lease is one UPDATE … FOR UPDATE SKIP LOCKED (store/pg/search.lease_job)
    with db.reader() as conn:  # issue 36: a 20k import's backlog was sorted for every lease (17 ms each)
        plan = " ".join(str(row[-1]) for row in conn.execute("EXPLAIN QUERY PLAN " + jobs.next_ready_sql(1),
                                                             ("extract", "9999")).fetchall())
    assert "idx_jobs_lease_order" in plan and "TEMP B-TREE" not in plan, plan
