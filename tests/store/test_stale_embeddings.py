"""The embedding tracker's question on both backends: which live memories lack a vector for the
current model — none stored, another model's, or a vector gone missing under the model's name —
newest updates first, and how many (on PostgreSQL answered from m009's indexes)."""

from __future__ import annotations

import numpy as np

from kenning.core.types import MemoryDraft
from kenning.store import memories as store
from kenning.store.retention import count_stale_embeddings, stale_embedding_rows
from kenning.store.vectors import upsert_embedding

MODEL = "model-a"


def test_stale_embeddings_found_by_every_cause(db):
    vector = np.ones(8, dtype=np.float32) / np.sqrt(8)
    with db.with_write_tx() as conn:
        ids = [store.insert_memory(conn, MemoryDraft(content=f"memory {i} about the cache"))[0] for i in range(6)]
        hashes = {r[0]: r[1] for r in conn.execute("SELECT id, content_hash FROM memories").fetchall()}
        for i, memory_id in enumerate(ids):
            conn.execute("UPDATE memories SET updated_at = ? WHERE id = ?", (f"2026-01-0{i + 1}T00:00:00.000Z", memory_id))
        for memory_id in ids[2:]:  # 0: no vector, no model named
            upsert_embedding(conn, hashes[memory_id], MODEL, vector)
            conn.execute("UPDATE memories SET embedding_model = ? WHERE id = ?", (MODEL, memory_id))
        conn.execute("UPDATE memories SET embedding_model = 'model-b' WHERE id = ?", (ids[1],))  # another model's
        conn.execute("DELETE FROM embeddings WHERE content_hash = ?", (hashes[ids[3]],))  # gone, name unchanged
        conn.execute("UPDATE memories SET is_deleted = 1, embedding_model = NULL WHERE id = ?", (ids[5],))  # not live
    conn = db.reader()
    assert [r["id"] for r in stale_embedding_rows(conn, MODEL, 10)] == [ids[3], ids[1], ids[0]]
    assert [r["id"] for r in stale_embedding_rows(conn, MODEL, 2)] == [ids[3], ids[1]]
    assert count_stale_embeddings(conn, MODEL) == 3
