"""GET /api/pipeline/status and `kenning pipeline status` against a real daemon process."""

from __future__ import annotations

import json
import subprocess
import sys

from pipeline_helpers import run_until

CONFIG = """
pipeline:
  worker:
    poll_ms: 100
"""


def test_status_reports_workers_queue_dead_jobs_and_budget(daemon_factory):
    daemon = daemon_factory(CONFIG)
    with daemon.client() as client:
        created = client.post("/api/memory/remember", json={
            "content": "We switched the ledger from SQLite to PostgreSQL. The ledger API is written in Rust.",
            "project": "pipeline-api"}).json()

        def extracted() -> bool:
            depth = client.get("/api/pipeline/status").json()["queue"]["by_type"].get("extract", {})
            return depth.get("completed", 0) >= 1

        assert run_until(extracted, timeout_s=60)
        status = client.get("/api/pipeline/status").json()
        assert status["mode"] == "full" and status["healthy"] is True
        assert status["workers"]["extraction"]["running"] is True
        assert status["workers"]["extraction"]["processed"] >= 1
        assert status["workers"]["lease-reaper"]["running"] is True
        assert status["dead_jobs"] == {"count": 0, "recent": []}
        assert status["token_budget"]["daily_limit"] == 200_000
        assert status["provider"]["provider"] == "offline"
        done = client.get("/api/pipeline/jobs", params={"memory_id": created["id"]}).json()["items"]
        assert done[0]["status"] == "completed" and done[0]["result"]["facts"] == 2

        stopped = client.post("/api/pipeline/workers/extraction/stop").json()
        assert stopped["running"] is False
        assert client.post("/api/pipeline/workers/extraction/start").json()["running"] is True
        missing = client.post("/api/pipeline/workers/nope/stop")
        assert missing.status_code == 404 and "no worker named" in missing.json()["error"]
        bad = client.get("/api/pipeline/jobs", params={"status": "weird"})
        assert bad.status_code == 400

    proc = subprocess.run([sys.executable, "-m", "kenning", "pipeline", "status", "--json"], env=daemon.env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["workers"]["extraction"]["running"] is True
    table = subprocess.run([sys.executable, "-m", "kenning", "pipeline", "status"], env=daemon.env,
                           capture_output=True, text=True, timeout=120)
    assert table.returncode == 0 and "extraction" in table.stdout and "LLM tokens today" in table.stdout
