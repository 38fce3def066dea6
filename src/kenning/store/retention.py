"""All SQL of the retention sweep and of maintenance repairs (memory-pipeline-v2
"Retention Worker", "Maintenance Worker"). Each function is one batch-limited step that
the caller runs in its own short write transaction."""

from __future__ import annotations

from typing import TypedDict, cast

from kenning.core.clock import now_iso
from kenning.store.backend import Connection, is_postgres
from kenning.store.memories import add_history, scrub_history
from kenning.store.vectors import delete_embedding


def expired_tombstones(conn: Connection, cutoff: str, limit: int) -> list[str]:
    """Ids of soft-deleted memories whose deleted_at is older than `cutoff`, oldest first; pinned and
    user-verified tombstones are kept (memory-system-v4 section 18)."""
    return [r[0] for r in conn.execute(
        "SELECT id FROM memories WHERE is_deleted = 1 AND deleted_at IS NOT NULL AND deleted_at < ?"
        " AND pinned = 0 AND user_verified = 0"
        " ORDER BY deleted_at, rid LIMIT ?", (cutoff, limit),
    )]


def _marks(ids: list[str]) -> str:
    return ",".join("?" * len(ids))


def purge_graph_links(conn: Connection, memory_ids: list[str]) -> dict[str, int]:
    """Step 1: drop mentions/attributes of these memories; delete entities left with no
    mentions (their relations go by cascade)."""
    if not memory_ids:
        return {"mentions": 0, "attributes": 0, "orphan_entities": 0}
    marks = _marks(memory_ids)
    touched = [r[0] for r in conn.execute(
        f"SELECT DISTINCT entity_id FROM memory_entity_mentions WHERE memory_id IN ({marks})", memory_ids
    )]
    mentions = conn.execute(f"DELETE FROM memory_entity_mentions WHERE memory_id IN ({marks})", memory_ids).rowcount
    attributes = conn.execute(f"DELETE FROM entity_attributes WHERE memory_id IN ({marks})", memory_ids).rowcount
    orphans = 0
    if touched:
        orphans = conn.execute(
            f"DELETE FROM entities WHERE id IN ({_marks(touched)}) AND mentions <= 0"
            " AND NOT EXISTS (SELECT 1 FROM memory_entity_mentions m WHERE m.entity_id = entities.id)",
            touched,
        ).rowcount
    return {"mentions": mentions, "attributes": attributes, "orphan_entities": orphans}


def purge_embeddings(conn: Connection, memory_ids: list[str]) -> int:
    """Step 2: vectors of these memories, unless another memory still uses the same content."""
    if not memory_ids:
        return 0
    marks = _marks(memory_ids)
    hashes = [r[0] for r in conn.execute(
        f"SELECT DISTINCT content_hash FROM memories m WHERE id IN ({marks}) AND NOT EXISTS"
        f" (SELECT 1 FROM memories o WHERE o.content_hash = m.content_hash AND o.id NOT IN ({marks}))",
        memory_ids + memory_ids,
    )]
    return sum(delete_embedding(conn, h) for h in hashes)


def purge_memory_rows(conn: Connection, memory_ids: list[str]) -> int:
    """Step 3: hard-delete the rows (FTS cleanup by trigger) and leave a 'purged' audit row."""
    if not memory_ids:
        return 0
    marks = _marks(memory_ids)
    conn.execute(f"DELETE FROM document_memories WHERE memory_id IN ({marks})", memory_ids)
    deleted = conn.execute(f"DELETE FROM memories WHERE id IN ({marks}) AND is_deleted = 1", memory_ids).rowcount
    stamp = now_iso()
    for memory_id in memory_ids:
        scrub_history(conn, memory_id)
        add_history(conn, memory_id, "purged", actor="retention", reason="tombstone retention window passed", at=stamp)
    return deleted


def purge_history(conn: Connection, cutoff: str, limit: int) -> int:
    """Step 4: memory_history rows older than `cutoff`, oldest first."""
    return conn.execute(
        "DELETE FROM memory_history WHERE id IN (SELECT id FROM memory_history WHERE created_at < ?"
        " ORDER BY id LIMIT ?)", (cutoff, limit),
    ).rowcount


class StaleEmbedding(TypedDict):
    """A live memory whose vector for the model is missing or stale."""

    id: str
    content: str
    content_hash: str
    embedding_model: str | None


# PostgreSQL (m009): a memory names the model of its vector (`embedding_model`, set in the write
# that stores the vector), so "names another model, or none" is read from an index; a vector gone
# missing under an unchanged name is looked for among the most recently updated memories only.
# The full anti-join took ~40 s per call at a million memories under load, and the embedding
# tracker ran two of them every 5 s on each daemon (issue 36).
RECENT_CHECKED = 2_000
_STALE_PG = (
    "SELECT {cols} FROM memories m WHERE m.is_deleted = 0"
    " AND (m.embedding_model IS NULL OR m.embedding_model < ? OR m.embedding_model > ?)"
    " UNION SELECT {cols} FROM (SELECT * FROM memories r WHERE r.is_deleted = 0"
    f" ORDER BY r.updated_at DESC, r.rid DESC LIMIT {RECENT_CHECKED}) m WHERE NOT EXISTS"
    " (SELECT 1 FROM embeddings e WHERE e.content_hash = m.content_hash AND e.model = ?)")


def stale_embedding_rows(conn: Connection, model: str, limit: int) -> list[StaleEmbedding]:
    """Live memories needing a vector for `model`: no embedding row for (content_hash, model)
    (missing, stale after an edit, or a model switch) or `embedding_model` naming another
    model. Newest updates first, at most `limit`. On PostgreSQL a missing vector under the
    memory's own model name is found among the RECENT_CHECKED most recently updated (_STALE_PG)."""
    if is_postgres(conn):
        cols = "m.id, m.content, m.content_hash, m.embedding_model, m.updated_at, m.rid"
        rows = conn.execute(f"SELECT id, content, content_hash, embedding_model FROM ({_STALE_PG.format(cols=cols)}) s"
                            " ORDER BY updated_at DESC, rid DESC LIMIT ?", (model, model, model, limit)).fetchall()
        return [cast(StaleEmbedding, dict(r)) for r in rows]
    rows = conn.execute(
        "SELECT m.id, m.content, m.content_hash, m.embedding_model FROM memories m"
        " WHERE m.is_deleted = 0 AND (m.embedding_model IS NOT ? OR NOT EXISTS"
        "  (SELECT 1 FROM embeddings e WHERE e.content_hash = m.content_hash AND e.model = ?))"
        " ORDER BY m.updated_at DESC, m.rid DESC LIMIT ?", (model, model, limit),
    ).fetchall()
    return [cast(StaleEmbedding, dict(r)) for r in rows]


def count_stale_embeddings(conn: Connection, model: str) -> int:
    if is_postgres(conn):
        return int(conn.execute(f"SELECT COUNT(*) FROM ({_STALE_PG.format(cols='m.rid')}) s",
                                (model, model, model)).fetchone()[0])
    return int(conn.execute(
        "SELECT COUNT(*) FROM memories m WHERE m.is_deleted = 0 AND (m.embedding_model IS NOT ? OR NOT EXISTS"
        " (SELECT 1 FROM embeddings e WHERE e.content_hash = m.content_hash AND e.model = ?))", (model, model),
    ).fetchone()[0])


def set_embedding_model(conn: Connection, memory_id: str, model: str) -> None:
    conn.execute("UPDATE memories SET embedding_model = ? WHERE id = ?", (model, memory_id))
