"""Migration 004 redacts secrets stored before the scanner existed: a store seeded with secrets in
clear (through the store layer, below the scanner) is opened by a real daemon, and neither its
API nor the database files show them afterwards."""

from __future__ import annotations

import json

from kenning.core.types import MemoryDraft
from kenning.store import graph as graph_store
from kenning.store import memories as mem_store
from kenning.store.db import open_database
from bench.harnesses.daemon import start_daemon

AWS = "AKIAZZ7QWERTYUIOPASD"
GITHUB = "ghp_" + "Zq9" * 12


def test_existing_secrets_are_redacted_on_upgrade(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    db = open_database(home / "memories.db")
    with db.with_write_tx() as conn:
        memory_id, _ = mem_store.insert_memory(conn, MemoryDraft(
            content=f"Deploy with {AWS} and push with GITHUB_TOKEN={GITHUB}", tags=[f"key {AWS}"], project="old"))
        mem_store.update_memory(conn, memory_id, {"tags": ["ops"]}, actor="test")
        entity = graph_store.upsert_entity(conn, GITHUB, "concept")
        graph_store.link_mention(conn, memory_id, entity, GITHUB)
        graph_store.add_attribute(conn, entity, f"token {GITHUB} for pushes", memory_id=memory_id)
        conn.execute("DELETE FROM schema_migrations WHERE version = 4")  # as if created before it existed
    db.checkpoint()
    db.close()
    assert AWS.encode() in (home / "memories.db").read_bytes()

    daemon = start_daemon(home)
    try:
        memory = daemon.get(f"/api/memory/{memory_id}").json()
        assert AWS not in json.dumps(memory) and GITHUB not in json.dumps(memory)
        assert "[REDACTED:aws-key]" in memory["content"] and "[REDACTED:" in memory["history"][0]["new_content"]
        entities = daemon.get("/api/graph/entities", limit=500).text
        assert GITHUB not in entities
        with daemon.client() as client:  # the content hash follows the redacted text: recall finds it
            hits = client.post("/api/memory/recall", json={"query": "deploy push", "project": "old"}).json()
        assert hits["results"] and hits["results"][0]["id"] == memory_id
    finally:
        daemon.stop()
    raw = b"".join(p.read_bytes() for p in home.glob("memories.db*"))
    assert AWS.encode() not in raw and GITHUB.encode() not in raw
