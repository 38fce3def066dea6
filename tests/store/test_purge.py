"""`forget --purge` means gone (issue 12 item 4): after a purge through a real daemon (CLI and
HTTP), a unique marker is in none of memories.db, -wal, -shm; the history keeps a content-free
'purged' event; FTS rows, graph mentions and entities only that memory mentioned are gone."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import sqlean


def _marker() -> str:
    return "zq" + uuid.uuid4().hex[:12] + "x"  # lowercase: FTS and canonical names store it as is


def _disk_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes().lower() for p in sorted(home.glob("memories.db*")) if p.is_file())


def _settle(client, memory_id: str, timeout: float = 90.0) -> None:
    """Wait until the memory's pipeline jobs are finished, so no worker writes after the purge."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = client.get("/api/pipeline/jobs", params={"memory_id": memory_id}).json()["items"]
        if all(j["status"] in ("completed", "dead") for j in jobs):
            return
        time.sleep(0.3)
    raise AssertionError(f"jobs of {memory_id} did not finish: {jobs}")


def _store(client, marker: str, project: str) -> str:
    camel = "Kraken" + marker.capitalize()  # an entity only this memory mentions
    r = client.post("/api/memory/remember", json={
        "content": f"We decided the {camel} service must use Cassandra; {marker} retries go through Redis.",
        "type": "decision", "project": project, "tags": [marker], "metadata": {"ticket": marker}})
    assert r.status_code == 200, r.text
    memory_id = r.json()["id"]
    _settle(client, memory_id)
    edited = client.patch(f"/api/memory/{memory_id}", json={
        "content": f"We decided the {camel} service must use Cassandra 5; {marker} retries go through Redis."})
    assert edited.status_code == 200
    _settle(client, memory_id)
    return memory_id


def _readonly(home: Path):
    conn = sqlean.connect(f"file:{home / 'memories.db'}?mode=ro", uri=True)
    conn.row_factory = sqlean.Row
    return conn


def test_purge_leaves_no_trace_on_disk(daemon):
    project = f"purge-{uuid.uuid4().hex[:8]}"
    markers = [_marker(), _marker()]
    with daemon.client() as client:
        keep = client.post("/api/memory/remember", json={
            "content": "The billing service uses Cassandra and Redis for its queues.", "project": project})
        assert keep.status_code == 200
        ids = [_store(client, m, project) for m in markers]
        entities = client.get("/api/graph/entities", params={"limit": 1000}).text.lower()
        assert all(m in entities for m in markers), "the memories were linked into the graph"
        assert all(m.encode() in _disk_bytes(daemon.home) for m in markers), "the grep sees stored content"

        env = {**os.environ, "KENNING_HOME": str(daemon.home), "KENNING_PORT": str(daemon.port)}
        out = subprocess.run([sys.executable, "-m", "kenning", "forget", ids[0], "--purge", "--reason", "leak"],
                             env=env, capture_output=True, text=True, timeout=180)
        assert out.returncode == 0 and "purged" in out.stdout, out.stderr
        gone = client.delete(f"/api/memory/{ids[1]}", params={"purge": "true"})
        assert gone.status_code == 200 and gone.json()["purged"] is True

        for memory_id in ids:
            assert client.get(f"/api/memory/{memory_id}").status_code == 404
        entities = client.get("/api/graph/entities", params={"limit": 1000}).text.lower()
        assert not any(m in entities for m in markers)
        assert "cassandra" in entities  # shared entities stay: another memory mentions them
        assert client.get(f"/api/memory/{keep.json()['id']}").status_code == 200

    conn = _readonly(daemon.home)
    try:
        for memory_id, marker in zip(ids, markers):
            rows = conn.execute("SELECT event, old_content, new_content, changes, reason FROM memory_history"
                                " WHERE memory_id = ? ORDER BY id", (memory_id,)).fetchall()
            assert [r["event"] for r in rows][0] == "created" and rows[-1]["event"] == "purged"
            assert all(r["old_content"] is None and r["new_content"] is None and r["changes"] == "{}" for r in rows)
            assert conn.execute("SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH ?",
                                (marker,)).fetchone()[0] == 0
            assert conn.execute("SELECT COUNT(*) FROM memory_entity_mentions WHERE memory_id = ?",
                                (memory_id,)).fetchone()[0] == 0
            assert conn.execute("SELECT COUNT(*) FROM memory_jobs WHERE memory_id = ?", (memory_id,)).fetchone()[0] == 0
    finally:
        conn.close()
    raw = _disk_bytes(daemon.home)
    for marker in markers:
        assert marker.encode() not in raw, f"{marker} still on disk after purge"
