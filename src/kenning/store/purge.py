"""`forget --purge`: the memory's content leaves the database, not just the memories table.

In one write transaction: memories derived from it by the pipeline (metadata.source_memory_id),
its graph mentions and attributes and the entities only it mentioned (their aspects and relations
by cascade), its vector unless another memory shares the content, its jobs and document links,
the content of its history rows (and of any history row quoting it), then the row itself; the
FTS indexes are optimized so no segment keeps its terms. The connections run with
`secure_delete=ON` (store.db), so freed cells and pages are zeroed, and `Database.checkpoint()`
afterwards truncates the WAL that still holds the old page images.
"""

from __future__ import annotations

from kenning.store import memories
from kenning.store.backend import Connection, is_postgres
from kenning.store.retention import purge_embeddings, purge_graph_links


def derived_ids(conn: Connection, memory_id: str) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT id FROM memories WHERE json_extract(metadata, '$.source_memory_id') = ? AND id != ?",
        (memory_id, memory_id),
    )]


def purge_everywhere(conn: Connection, memory_id: str, *, actor: str | None = None, reason: str | None = None) -> list[str]:
    """Purge `memory_id` and what was derived from it; returns the purged ids. Call inside a write tx."""
    memories.get_memory(conn, memory_id)  # NotFound for an unknown id
    ids = [memory_id] + derived_ids(conn, memory_id)
    marks = ",".join("?" * len(ids))
    purge_graph_links(conn, ids)
    purge_embeddings(conn, ids)
    conn.execute(f"DELETE FROM memory_jobs WHERE memory_id IN ({marks})", ids)
    conn.execute(f"DELETE FROM document_memories WHERE memory_id IN ({marks})", ids)
    for mid in ids:
        memories.purge_memory(conn, mid, actor=actor,
                              reason=reason if mid == memory_id else f"derived from purged memory {memory_id}")
    optimize_fts(conn)
    return ids


def optimize_fts(conn: Connection) -> None:
    """Merge the FTS segments so deleted documents' terms are dropped, not just marked deleted.
    (On PostgreSQL the trigger deletes the row's tsvector outright: nothing to merge.)"""
    if is_postgres(conn):
        return
    for table in ("memories_fts", "memory_hints_fts"):
        conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
