"""GET /api/graph/* and `kenning graph show|list` against a real daemon process."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def test_graph_endpoints_and_cli(daemon):
    with daemon.client() as client:
        stored = client.post("/api/memory/remember", json={
            "content": "We switched from MySQL to PostgreSQL for billing", "project": "graph-api"}).json()
        listed = client.get("/api/graph/entities", params={"q": "sql"}).json()
        names = {e["name"] for e in listed["items"]}
        assert {"MySQL", "PostgreSQL"} <= names and listed["stats"]["entities"] >= 2
        entity = client.get("/api/graph/entity/postgresql").json()  # by name, any casing
        assert entity["name"] == "PostgreSQL"
        assert client.get(f"/api/graph/entity/{entity['id']}").json()["id"] == entity["id"]  # by id
        assert [(r["type"], r["direction"], r["other_name"]) for r in entity["relations"]] == [
            ("replaced_by", "in", "MySQL")]
        attrs = [a for aspect in entity["aspects"] for a in aspect["attributes"]]
        assert any(a["kind"] == "constraint" and a["memory_id"] == stored["id"] for a in attrs)
        assert stored["id"] in {m["id"] for m in entity["memories"]}
        missing = client.get("/api/graph/entity/no-such-entity")
        assert missing.status_code == 404 and "no entity" in missing.json()["error"]
        assert client.get("/api/graph/entities", params={"limit": 0}).status_code == 422

    env = {**os.environ, "KENNING_HOME": str(daemon.home), "KENNING_PORT": str(daemon.port)}
    shown = subprocess.run([sys.executable, "-m", "kenning", "graph", "show", "MySQL"], env=env,
                           capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stderr
    assert "replaced_by" in shown.stdout and "PostgreSQL" in shown.stdout and "constraint" in shown.stdout
    as_json = subprocess.run([sys.executable, "-m", "kenning", "graph", "list", "--json"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["total"] >= 2
    unknown = subprocess.run([sys.executable, "-m", "kenning", "graph", "show", "Nonexistent"], env=env,
                             capture_output=True, text=True, timeout=120)
    assert unknown.returncode != 0 and "no entity" in unknown.stderr


def test_graph_cli_works_without_a_daemon(tmp_path):
    env = {**os.environ, "KENNING_HOME": str(tmp_path / "home"), "KENNING_PORT": "1"}
    run = lambda *a: subprocess.run([sys.executable, "-m", "kenning", *a], env=env,  # noqa: E731
                                    capture_output=True, text=True, timeout=180)
    assert run("remember", "The Acme Dashboard uses Grafana").returncode == 0
    shown = run("graph", "show", "grafana", "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["name"] == "Grafana" and data["memories"][0]["content"] == "The Acme Dashboard uses Grafana"


def test_entities_sorted_by_relations_skip_unconnected_entities(tmp_path):
    """`sort=relations` (where the dashboard's Graph tab opens): most connected first, and an
    entity mentioned often but related to nothing is not offered at all."""
    from kenning.core.types import MemoryDraft
    from kenning.store import graph as graph_store
    from kenning.store import memories as memory_store
    from kenning.store.db import open_database

    db = open_database(tmp_path / "g.db")
    with db.with_write_tx() as conn:
        ids = {name: graph_store.upsert_entity(conn, name, "tool") for name in ("Redis", "Postgres", "Kafka", "Noise")}
        for i in range(6):  # "Noise" is the most mentioned entity
            memory_id, _ = memory_store.insert_memory(conn, MemoryDraft(content=f"noise note {i}"))
            graph_store.link_mention(conn, memory_id, ids["Noise"], "Noise")
        for target in ("Postgres", "Kafka"):
            graph_store.upsert_relation(conn, ids["Redis"], ids[target], "uses")
    by_mentions, _ = graph_store.list_entities(db.reader())
    by_relations, total = graph_store.list_entities(db.reader(), order="relations")
    db.close()
    assert by_mentions[0].name == "Noise"
    assert by_relations[0].name == "Redis" and total == 3
    assert "Noise" not in {e.name for e in by_relations}
