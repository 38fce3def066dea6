"""Speaker labels are not graph entities (issue 35), on both store backends: the linker and the triple
writer refuse "User" / "Assistant", and migration m019 removes the ones an older store holds, with their
mentions, relations, aspects and attributes, leaving every other entity as it was."""

from __future__ import annotations

from kenning.core.types import MemoryDraft
from kenning.graph.entities import extract_mentions
from kenning.graph.linker import link_memory
from kenning.store import graph as graph_store
from kenning.store import memories as mem_store
from kenning.store.migrations.m019_speaker_entities import up as m019

EXCHANGE = "User: how do we deploy billing?\nAssistant: Billing deploys go through Helm from the release branch."


def test_speaker_labels_are_never_spotted():
    names = [m.name for m in extract_mentions(EXCHANGE)]
    assert "Helm" in names and not {"User", "Assistant"} & set(names), names


def test_linker_and_triples_refuse_speakers_and_m019_cleans_an_old_store(db):
    with db.with_write_tx() as conn:
        memory_id, _ = mem_store.insert_memory(conn, MemoryDraft(content=EXCHANGE, project="acme"))
        link_memory(conn, memory_id, EXCHANGE, "acme")
        counts = graph_store.persist_triples(conn, memory_id, [
            {"source": "User", "relationship": "asks about", "target": "Helm"},
            {"source": "Billing", "relationship": "deploys with", "target": "Helm"},
        ])
    assert counts["skipped"] == 1 and counts["relations"] == 1
    names = {row[0] for row in db.reader().execute("SELECT canonical_name FROM entities").fetchall()}
    assert "helm" in names and not {"user", "assistant"} & names

    with db.with_write_tx() as conn:  # what an older linker stored: speaker entities with all that hangs off them
        user = graph_store.upsert_entity(conn, "User")
        assistant = graph_store.upsert_entity(conn, "Assistant")
        helm = graph_store.upsert_entity(conn, "Helm")
        graph_store.link_mention(conn, memory_id, user, "User")
        graph_store.link_mention(conn, memory_id, assistant, "Assistant")
        graph_store.upsert_relation(conn, user, helm, "asks about")
        aspect = graph_store.upsert_aspect(conn, user, "questions")
        conn.execute("INSERT INTO entity_attributes(id, entity_id, aspect_id, memory_id, content, normalized_content,"
                     " created_at, updated_at) VALUES ('a1', ?, ?, ?, 'asks a lot', 'asks a lot', 'x', 'x')",
                     (user, aspect, memory_id))
        before = {row[0] for row in conn.execute("SELECT canonical_name FROM entities").fetchall()}
        m019(conn)
        after = {row[0] for row in conn.execute("SELECT canonical_name FROM entities").fetchall()}
        left = {table: conn.execute(f"SELECT COUNT(*) FROM {table} WHERE {column} IN (?, ?)",
                                    (user, assistant)).fetchone()[0]
                for table, column in (("memory_entity_mentions", "entity_id"), ("relations", "source_entity_id"),
                                      ("entity_aspects", "entity_id"), ("entity_attributes", "entity_id"))}
        helm_mentions = conn.execute("SELECT COUNT(*) FROM memory_entity_mentions WHERE entity_id = ?",
                                     (helm,)).fetchone()[0]
    assert before - after == {"user", "assistant"}
    assert left == dict.fromkeys(left, 0)
    assert helm_mentions == 1  # the real entity keeps its mention
