"""Speaker labels are not entities (issue 35): "User", "Assistant" (the labels of a transcript's
turns) were spotted as proper nouns and became the graph's top entities. The linker and the
triple writer now refuse them (core.text.SPEAKER_LABELS); this removes the ones already stored,
with what hangs off them (mentions, relations, aspects, attributes), spelled out for every backend
(PostgreSQL runs this same file; SQLite's foreign keys may be off).

The label list is frozen here, as the migration ran: a later change to SPEAKER_LABELS is not
applied to stores twice.
"""

from kenning.store.backend import Connection

LABELS = ("user", "assistant", "human", "system", "the user", "the assistant")


def up(conn: Connection) -> None:
    marks = ", ".join("?" for _ in LABELS)
    ids = [row[0] for row in conn.execute(
        f"SELECT id FROM entities WHERE canonical_name IN ({marks})", LABELS).fetchall()]
    for entity_id in ids:
        conn.execute("UPDATE entity_attributes SET aspect_id = NULL WHERE aspect_id IN"
                     " (SELECT id FROM entity_aspects WHERE entity_id = ?)", (entity_id,))
        for table, column in (("memory_entity_mentions", "entity_id"), ("entity_attributes", "entity_id"),
                              ("entity_aspects", "entity_id"), ("relations", "source_entity_id"),
                              ("relations", "target_entity_id")):
            conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (entity_id,))
        conn.execute("DELETE FROM entities WHERE id = ?", (entity_id,))
