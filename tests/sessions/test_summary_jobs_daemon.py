"""Session summary jobs follow the job queue's rules in a real daemon: a job whose daemon died
holding it is re-leased once its lease expires, and a summary that keeps failing (its embedding
server answers 503) is retried after a backoff and then dead, while the queue's health counts it
once. The embedding server is a real local HTTP server."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Callable

import pytest

from kenning.store import sessions as sstore
from kenning.store.db import open_database
from bench.harnesses.daemon import start_daemon
from tests.diagnostics.fake_embeddings import FakeEmbeddings

TRANSCRIPT = ("User: why do the nightly builds fail on Mondays?\n"
              "Assistant: The cache volume is pruned on Sunday night; we decided to warm it in the job.\n")
CONFIG = """predictor:
  enabled: false
pipeline:
  worker:
    poll_ms: 200
    max_retries: 2
    lease_timeout_ms: 10000
    reaper_interval_ms: 200
    backoff_base_ms: 3000
    backoff_jitter_ms: 0
"""
ORPHAN = "orphaned-session"


@pytest.fixture(scope="module")
def fake_embeddings():
    server = FakeEmbeddings()
    yield server
    server.close()


@pytest.fixture(scope="module")
def qdaemon(tmp_path_factory, fake_embeddings):
    """A daemon whose store holds a summary job leased an hour ago by a daemon that died."""
    home = tmp_path_factory.mktemp("summary-queue")
    db = open_database(home / "memories.db")
    with db.with_write_tx() as conn:
        sstore.create_session(conn, ORPHAN, harness="claude-code", project="builds", cwd=None, context=None,
                              started_at="2026-01-01T09:00:00Z")
        sstore.save_transcript(conn, ORPHAN, TRANSCRIPT, "2026-01-01T09:30:00Z")
        sstore.end_session(conn, ORPHAN, "2026-01-01T09:30:00Z")
        sstore.enqueue_summary_job(conn, ORPHAN)
        assert sstore.lease_summary_job(conn, ORPHAN, "summaries:4242:gone") is not None
        conn.execute("UPDATE memory_jobs SET leased_at = '2026-01-01T09:31:00Z' WHERE dedup_key = ?", (ORPHAN,))
    db.close()
    proc = start_daemon(home, fake_embeddings.config_yaml(CONFIG))
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def http(qdaemon):
    with qdaemon.client(timeout=120) as client:
        yield client


def wait_for(http, key: str, ok: Callable[[dict], bool], timeout_s: float = 120.0, step_s: float = 0.1) -> dict:
    deadline = time.monotonic() + timeout_s
    job: dict = {}
    while time.monotonic() < deadline:
        job = http.get(f"/api/sessions/{key}").json().get("summary_job") or {}
        if ok(job):
            return job
        time.sleep(step_s)
    raise AssertionError(f"summary job of {key} never got there; last seen {job}")


def test_a_job_leased_by_a_dead_daemon_is_re_leased_after_its_lease_expires(http):
    job = wait_for(http, ORPHAN, lambda j: j.get("status") == "done")
    assert job["attempts"] == 2  # the dead daemon's attempt and this daemon's
    detail = http.get(f"/api/sessions/{ORPHAN}").json()
    assert detail["score"] is not None and job["result"]["score"]["score"] == detail["score"]["score"]


def test_a_failing_summary_backs_off_then_is_dead_and_a_new_session_end_retries(http, fake_embeddings):
    key = f"fails-{uuid.uuid4().hex[:8]}"
    fake_embeddings.fail = True
    try:
        queued = http.post("/api/hooks/session-end", json={"session_key": key, "transcript": TRANSCRIPT})
        assert queued.status_code == 200 and queued.json()["queued"] is True
        retrying = wait_for(http, key, lambda j: j.get("attempts") == 1 and j.get("error") is not None)
        assert retrying["status"] == "pending" and retrying["run_after"] > retrying["updated_at"]  # backoff
        assert "503" in retrying["error"] or "embedding" in retrying["error"].lower()
        dead = wait_for(http, key, lambda j: j.get("status") == "failed")
        assert dead["job_status"] == "dead" and dead["attempts"] == 2 and dead["failed_at"]
        # asked again while the server is still down, and waited on: it fails in the request, retry pending
        waited = http.post("/api/hooks/session-end", json={"session_key": key, "wait": True}).json()
        assert waited["summary"]["status"] == "failed" and waited["summary"]["job_status"] == "pending"
        assert waited["job_id"] != dead["id"]
    finally:
        fake_embeddings.fail = False

    queue = http.get("/api/diagnostics/queue").json()
    by_type = queue["metrics"]["tables"]["memory_jobs"]["by_type"]
    assert by_type["session_summary"]["dead"] == 1 and queue["metrics"]["dead"] >= 1
    assert any("dead job" in p["message"] for p in queue["problems"])
    assert "summary_jobs" not in queue["metrics"]["tables"]

    done = wait_for(http, key, lambda j: j.get("status") == "done")  # the pending retry runs once the server is back
    assert done["id"] == waited["job_id"] and done["attempts"] == 2
    timeline = http.get(f"/api/timeline/{key}", params={"source": "job"}).json()["events"]
    assert {e["event"] for e in timeline} >= {"enqueued", "dead", "completed"}


def test_dead_summaries_are_requeued_and_listed_like_every_job(qdaemon, http, fake_embeddings):
    key = f"requeue-{uuid.uuid4().hex[:8]}"
    fake_embeddings.fail = True
    try:
        http.post("/api/hooks/session-end", json={"session_key": key, "transcript": TRANSCRIPT})
        dead = wait_for(http, key, lambda j: j.get("status") == "failed")
    finally:
        fake_embeddings.fail = False
    before = http.get("/api/pipeline/status").json()["queue"]["by_type"]["session_summary"]
    assert before["dead"] >= 1
    requeued = http.post("/api/pipeline/dead/requeue", params={"job_type": "session_summary"}).json()
    assert requeued["requeued"] == before["dead"]
    done = wait_for(http, key, lambda j: j.get("status") == "done")
    assert done["id"] == dead["id"] and done["attempts"] == 1  # a fresh set of attempts, then it ran
    table = subprocess.run([sys.executable, "-m", "kenning", "pipeline", "status"], env=qdaemon.env,
                           capture_output=True, text=True, timeout=180)
    assert table.returncode == 0, table.stderr
    assert "session_summary" in table.stdout

