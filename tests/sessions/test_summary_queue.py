"""Session summary jobs live in the one job queue (memory_jobs): migration 026 moves the old
summary_jobs rows there, enqueue is idempotent per session, and the summary worker (not the
pipeline's) runs them. Both store backends, a real service over a real store."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from kenning.core.events import SessionEnded, SessionStarted
from kenning.core.config import load_settings
from kenning.core.config_store import StoreSettings
from kenning.service import Kenning
from kenning.store import jobs
from kenning.store import sessions as sstore
from kenning.store.diagnostics import table_exists
from kenning.store.migrations import migrate
from bench.harnesses.daemon import free_port

TRANSCRIPT = ("User: where do the payment webhooks get retried?\n"
              "Assistant: In billing/worker.py; we decided to always retry webhooks three times.\n")


def _summary_jobs(db, key: str) -> list[jobs.Job]:
    return [j for j in jobs.list_jobs(db, job_type="session_summary") if j.dedup_key == key]


def _drain(k: Kenning) -> int:
    """Run the service's summary worker until no ready job is left; returns how many it ran."""
    worker = k.workers.get("summaries")
    before = worker.counters["processed"] + worker.counters["failed"]
    for _ in range(50):
        worker.run_once()
        if worker.current_job is None and not jobs.list_jobs(k.db, status="pending", job_type="session_summary"):
            break
    return worker.counters["processed"] + worker.counters["failed"] - before


def _open_raw(backend: str, tmp_path: Path, request) -> tuple[object, dict[str, str]]:
    """An empty store (no migration yet) and the `store:` settings that reach it."""
    if backend == "sqlite":
        from kenning.store.db import Database

        return Database(tmp_path / "home" / "memories.db"), {"backend": "sqlite"}
    from kenning.store.pg.db import PostgresDatabase, require_pgvector

    url = request.getfixturevalue("pg_server").create_database(f"m26{uuid.uuid4().hex[:10]}")
    db = PostgresDatabase(url)
    require_pgvector(db)
    return db, {"backend": "postgres", "url": url}


OLD_ROWS = [  # summary_jobs as kenning before migration 026 left them
    ("s-pending", "pending", 0, None, None, None),
    ("s-running", "running", 1, None, None, None),  # its daemon stopped mid-job
    ("s-failed", "failed", 1, "LLM timed out", None, None),
    ("s-done", "done", 1, None, '{"scored_memories": 0}', "2026-01-01T00:05:00Z"),
]


def test_migration_026_moves_summary_jobs_into_memory_jobs_and_they_run(backend, tmp_path, request):
    (tmp_path / "home").mkdir()
    db, store_config = _open_raw(backend, tmp_path, request)
    migrate(db, upto=25)
    with db.with_write_tx() as conn:
        assert table_exists(conn, "summary_jobs")
        for key, status, attempts, error, result, completed in OLD_ROWS:
            sstore.create_session(conn, key, harness="claude-code", project="m26", cwd=None, context=None,
                                  started_at="2026-01-01T00:00:00Z")
            sstore.save_transcript(conn, key, TRANSCRIPT, "2026-01-01T00:01:00Z")
            sstore.end_session(conn, key, "2026-01-01T00:02:00Z")
            conn.execute(
                "INSERT INTO summary_jobs(session_key, status, attempts, error, result, created_at, updated_at,"
                " completed_at) VALUES (?, ?, ?, ?, ?, '2026-01-01T00:02:00Z', '2026-01-01T00:03:00Z', ?)",
                (key, status, attempts, error, result, completed))
    assert 26 in migrate(db)
    with db.snapshot() as conn:
        assert not table_exists(conn, "summary_jobs")
    moved = {j.dedup_key: j for j in jobs.list_jobs(db, job_type="session_summary")}
    assert set(moved) == {row[0] for row in OLD_ROWS}
    assert {k: j.status for k, j in moved.items()} == {
        "s-pending": "pending", "s-running": "pending", "s-failed": "dead", "s-done": "completed"}
    assert moved["s-failed"].last_error == "LLM timed out" and moved["s-failed"].failed_at == "2026-01-01T00:03:00Z"
    assert moved["s-done"].result == {"scored_memories": 0} and moved["s-done"].completed_at == "2026-01-01T00:05:00Z"
    assert moved["s-running"].attempts == 1 and moved["s-pending"].payload == {"session_key": "s-pending"}
    assert all(j.created_at == "2026-01-01T00:02:00Z" for j in moved.values())
    db.close()

    settings = load_settings(environ={"KENNING_HOME": str(tmp_path / "home")}, port=free_port(), store=store_config)
    k = Kenning(settings).start(background=False)
    try:
        assert _drain(k) == 2  # the pending and the interrupted job; dead and completed ones stay
        for key in ("s-pending", "s-running"):
            detail = k.sessions.detail(key)
            assert detail["summary_job"]["status"] == "done" and detail["score"] is not None
            assert detail["summary_job"]["result"]["score"]["score"] == detail["score"]["score"]
        assert k.sessions.detail("s-failed")["summary_job"]["status"] == "failed"
        assert k.sessions.detail("s-failed")["summary_job"]["error"] == "LLM timed out"
        assert k.sessions.detail("s-done")["summary_job"]["status"] == "done"
        # a session-end after a dead summary queues a fresh job, run at once when waited on
        again = k.sessions.session_end(SessionEnded(session_key="s-failed"), wait=True)
        assert again["summary"]["status"] == "done" and again["job_id"] != moved["s-failed"].id
        assert [j.status for j in _summary_jobs(k.db, "s-failed")] == ["completed", "dead"]
    finally:
        k.close()


def test_one_live_summary_job_per_session_and_a_rerun_after_it_finished(kenning):
    k = kenning
    key = f"q-{uuid.uuid4().hex[:8]}"
    k.sessions.session_start(SessionStarted(session_key=key, project="queue"))
    first = k.sessions.session_end(SessionEnded(session_key=key, transcript=TRANSCRIPT))
    second = k.sessions.session_end(SessionEnded(session_key=key, transcript=TRANSCRIPT))
    assert first["queued"] and second["job_id"] == first["job_id"]  # idempotent: one pending job
    assert [j.status for j in _summary_jobs(k.db, key)] == ["pending"]
    assert k.sessions.detail(key)["summary_job"]["status"] == "pending"

    assert _drain(k) == 1
    done = k.sessions.detail(key)["summary_job"]
    assert done["status"] == "done" and done["attempts"] == 1 and done["completed_at"]
    # a session-end after a finished summary summarizes again (as it always did): a new job
    third = k.sessions.session_end(SessionEnded(session_key=key, transcript=TRANSCRIPT), wait=True)
    assert third["job_id"] != first["job_id"] and third["summary"]["status"] == "done"
    assert third["summary"]["episodes"]["stored"] == 0  # the episodes of the first run are kept, not doubled
    assert [j.status for j in _summary_jobs(k.db, key)] == ["completed", "completed"]
    assert k.sessions.detail(key)["summary_job"]["id"] == third["job_id"]


def test_pipeline_workers_and_the_summary_worker_keep_to_their_own_jobs(kenning):
    k = kenning
    assert k.workers.get("summaries").job_types == ("session_summary",)
    pipeline_workers = [w for name, w in k.workers.workers.items() if name != "summaries" and hasattr(w, "job_types")]
    assert pipeline_workers and all("session_summary" not in w.job_types for w in pipeline_workers)
    key = f"own-{uuid.uuid4().hex[:8]}"
    k.sessions.session_end(SessionEnded(session_key=key, transcript=TRANSCRIPT))
    for worker in pipeline_workers:
        worker.run_once()
    assert [j.status for j in _summary_jobs(k.db, key)] == ["pending"]  # no pipeline worker took it
    extract_id, _ = jobs.enqueue(k.db, "extract", memory_id=f"m-{key}")
    assert _drain(k) == 1
    assert jobs.get_job(k.db, extract_id).status == "pending"  # the summary worker never takes an extract job
    assert [j.status for j in _summary_jobs(k.db, key)] == ["completed"]


@pytest.mark.parametrize("wait", [False, True])
def test_session_end_answers_the_same_shape(kenning, wait):
    key = f"shape-{uuid.uuid4().hex[:8]}"
    out = kenning.sessions.session_end(SessionEnded(session_key=key, transcript=TRANSCRIPT), wait=wait)
    assert out["queued"] is (not wait) and isinstance(out["job_id"], int)
    job = kenning.sessions.detail(key)["summary_job"]
    assert set(job) >= {"id", "session_key", "status", "attempts", "error", "result", "created_at",
                        "updated_at", "completed_at"}
    assert job["id"] == out["job_id"] and job["session_key"] == key
    assert job["status"] == ("done" if wait else "pending")


def test_a_waited_run_reports_a_job_that_outlived_its_lease_as_running(db):
    """run_leased re-reads the job: one the reaper gave to another worker mid-run is 'running', not failed."""
    from kenning.sessions.end import summary_outcome

    with db.with_write_tx() as conn:
        sstore.enqueue_summary_job(conn, "slow")
        mine = sstore.lease_summary_job(conn, "slow", "summaries:request")
    assert mine is not None and mine.status == "leased" and mine.attempts == 1
    assert jobs.reap_stale(db, lease_timeout_ms=0) == {"requeued": 1, "dead": 0}
    with db.with_write_tx() as conn:
        theirs = sstore.lease_summary_job(conn, "slow", "summaries:worker")
    assert theirs is not None and theirs.id == mine.id
    assert not jobs.complete(db, mine.id, {"late": True}, worker_id="summaries:request")  # lease lost
    outcome = summary_outcome(jobs.get_job(db, mine.id))
    assert outcome["status"] == "running" and outcome["job_status"] == "leased" and outcome["attempts"] == 2
    assert jobs.complete(db, mine.id, {"score": {"score": 0.5}}, worker_id="summaries:worker")
    assert summary_outcome(jobs.get_job(db, mine.id)) == {"session_key": "slow", "status": "done",
                                                          "score": {"score": 0.5}}
