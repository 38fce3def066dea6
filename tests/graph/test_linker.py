"""Inline entity linker: real SQLite, the real write path and model; deterministic, idempotent."""

from __future__ import annotations

import pytest

from kenning.core.types import MemoryDraft
from kenning.graph.decisions import DECISION_PATTERNS, is_decision_content
from kenning.graph.entities import extract_mentions
from kenning.graph.linker import link_memory
from kenning.store import graph as graph_store
from kenning.store import memories
from kenning.store.db import open_database

BILLING = "We switched from MySQL to PostgreSQL for billing"


def graph_snapshot(conn) -> dict:
    """Everything the linker wrote, without ids or timestamps."""
    names = {r["id"]: r["canonical_name"] for r in conn.execute("SELECT id, canonical_name FROM entities")}
    return {
        "entities": sorted((r["canonical_name"], r["entity_type"], r["mentions"])
                           for r in conn.execute("SELECT * FROM entities")),
        "relations": sorted((names[r["source_entity_id"]], r["relation_type"], names[r["target_entity_id"]],
                             r["mentions"], round(r["confidence"], 6)) for r in conn.execute("SELECT * FROM relations")),
        "attributes": sorted((names[r["entity_id"]], r["kind"], r["importance"], r["content"])
                             for r in conn.execute("SELECT * FROM entity_attributes")),
        "aspects": sorted((names[r["entity_id"]], r["canonical_name"]) for r in conn.execute("SELECT * FROM entity_aspects")),
    }


def test_mysql_to_postgresql_yields_both_entities_and_a_constraint(kenning):
    stored = kenning.remember(MemoryDraft(content=BILLING, project="billing"))
    conn = kenning.db.reader()
    mysql, postgres = graph_store.find_entity(conn, "MySQL"), graph_store.find_entity(conn, "postgresql")
    assert mysql and postgres, "both databases become entities"
    assert {mysql.name, postgres.name} == {"MySQL", "PostgreSQL"}
    linked = {m["id"] for m in graph_store.entity_memories(conn, postgres.id)}
    assert linked == {stored.id}
    relations = graph_store.entity_relations(conn, mysql.id)
    assert [(r.source_name, r.relation_type, r.target_name) for r in relations] == [
        ("MySQL", "replaced_by", "PostgreSQL")]
    attrs = [a for aspect in graph_store.entity_aspects(conn, postgres.id) for a in aspect["attributes"]]
    assert attrs and all(a["kind"] == "constraint" and a["importance"] == 0.85 for a in attrs)
    assert attrs[0]["memory_id"] == stored.id and "PostgreSQL" in attrs[0]["content"]


def test_linker_is_deterministic_across_databases(tmp_path):
    text = ("Alice prefers pytest over unittest. The API uses JWT tokens stored in src/auth/jwt.py; "
            "we migrated from Redis to Memcached on 2024-03-01. Never edit `config.yaml` by hand.")
    snapshots = []
    for name in ("a", "b"):
        db = open_database(tmp_path / f"{name}.db")
        with db.with_write_tx() as conn:
            memory_id, _ = memories.insert_memory(conn, MemoryDraft(content=text))
            link_memory(conn, memory_id, text, None)
        snapshots.append(graph_snapshot(db.reader()))
        db.close()
    assert snapshots[0] == snapshots[1]
    assert [m.name for m in extract_mentions(text)] == [m.name for m in extract_mentions(text)]
    names = {e[0] for e in snapshots[0]["entities"]}
    assert {"alice", "pytest", "unittest", "jwt", "src/auth/jwt.py", "redis", "memcached", "config.yaml"} <= names


def test_linking_twice_adds_nothing(tmp_path):
    db = open_database(tmp_path / "k.db")
    with db.with_write_tx() as conn:
        memory_id, _ = memories.insert_memory(conn, MemoryDraft(content=BILLING))
        first = link_memory(conn, memory_id, BILLING)
        before = graph_snapshot(conn)
        second = link_memory(conn, memory_id, BILLING)
        assert graph_snapshot(conn) == before
    assert first.entities == ["MySQL", "PostgreSQL"] and second.entities == []


def test_linker_writes_roll_back_with_the_memory(tmp_path):
    db = open_database(tmp_path / "k.db")
    with pytest.raises(RuntimeError):
        with db.with_write_tx() as conn:
            memory_id, _ = memories.insert_memory(conn, MemoryDraft(content=BILLING))
            link_memory(conn, memory_id, BILLING)
            raise RuntimeError("the write transaction fails after linking")
    assert graph_store.graph_stats(db.reader())["entities"] == 0


def test_every_decision_pattern_fires_and_plain_facts_do_not():
    samples = [
        "We chose to use Postgres over MySQL", "Team decided to drop Python 2", "We switched to uv",
        "They migrated away from Heroku", "I picked Vite over Webpack", "We went with FastAPI",
        "We're sticking with SQLite", "We committed to weekly releases", "They settled on Rust",
        "We will use Redis for caching", "Alice prefers tabs over spaces", "The team adopted trunk-based development",
        "Architecture decision: one writer", "Design decision: store vectors by hash",
        "Settled: merge_records keys on the lowercased email", "We agreed to pin every dependency",
        "We standardized on ISO dates", "The rule is exactly one retry", "Amended rule: keep the fullest record",
        "Superseding keep-latest, the fuller record wins", "We changed our mind about the cache",
    ]
    assert len(samples) == len(DECISION_PATTERNS) == 21
    for pattern, sample in zip(DECISION_PATTERNS, samples):
        assert pattern.search(sample), (pattern.pattern, sample)
    assert not is_decision_content("The billing service runs nightly at 2am")


def test_relation_confidence_is_a_running_average_and_mentions_follow_purges(tmp_path):
    db = open_database(tmp_path / "k.db")
    with db.with_write_tx() as conn:
        first, _ = memories.insert_memory(conn, MemoryDraft(content="billing uses postgres"))
        second, _ = memories.insert_memory(conn, MemoryDraft(content="billing still uses postgres"))
        triple = {"source": "billing", "relationship": "uses", "target": "PostgreSQL"}
        graph_store.persist_triples(conn, first, [{**triple, "confidence": 0.9}])
        graph_store.persist_triples(conn, second, [{**triple, "confidence": 0.3}])
        graph_store.persist_triples(conn, second, [{**triple, "confidence": 0.6}])
    conn = db.reader()
    billing = graph_store.find_entity(conn, "Billing")
    (relation,) = graph_store.entity_relations(conn, billing.id)
    assert relation.mentions == 3
    assert relation.confidence == pytest.approx((0.9 + 0.3 + 0.6) / 3)
    assert billing.mentions == 2  # two memories mention it; re-persisting does not inflate
    with db.with_write_tx() as conn:
        memories.purge_memory(conn, first)
    assert graph_store.find_entity(db.reader(), "billing").mentions == 1
