"""The maintenance health check's index figures on both backends (`store.diagnostics.index_stats`):
live memories without a vector for the model, and the full-text rows against the memories. On
PostgreSQL the first is the embedding tracker's indexed count and the second two counts, not the
anti-joins that took seconds at a million memories (issue 36); the figures must be the same."""

from __future__ import annotations

import numpy as np

from kenning.core.types import MemoryDraft
from kenning.store import memories as store
from kenning.store.diagnostics import index_stats
from kenning.store.vectors import upsert_embedding

MODEL = "model-a"


def test_memories_without_a_vector_and_full_text_rows(db, backend):
    with db.with_write_tx() as conn:
        ids = [store.insert_memory(conn, MemoryDraft(content=f"retry budget note {i}"))[0] for i in range(5)]
        hashes = dict(conn.execute("SELECT id, content_hash FROM memories").fetchall())
        for memory_id in ids[:3]:  # two memories have no vector yet
            upsert_embedding(conn, hashes[memory_id], MODEL, np.ones(8, dtype=np.float32) / np.sqrt(8))
            conn.execute("UPDATE memories SET embedding_model = ? WHERE id = ?", (MODEL, memory_id))
        conn.execute("UPDATE memories SET is_deleted = 1 WHERE id = ?", (ids[4],))  # deleted: not counted
    stats = index_stats(db.reader(), MODEL)
    assert (stats["live_memories"], stats["total_memories"]) == (4, 5)
    assert (stats["fts_rows"], stats["fts_missing"], stats["fts_orphans"]) == (5, 0, 0)
    assert (stats["embeddings"], stats["embedding_models"], stats["embeddings_missing"]) == (3, {MODEL: 3}, 1)

    with db.with_write_tx() as conn:  # a vector lost under an unchanged model name
        conn.execute("DELETE FROM embeddings WHERE content_hash = ?", (hashes[ids[0]],))
    assert index_stats(db.reader(), MODEL)["embeddings_missing"] == 2
