"""Embedding tracker (model switch ⇒ re-embed) and the hints worker with the offline LLM."""

from __future__ import annotations

import hashlib

import numpy as np

from kenning.core.types import MemoryDraft
from kenning.pipeline.embedding_tracker import TrackerStats, refresh_cycle
from kenning.pipeline.hints import parse_hints
from kenning.providers.offline_rules import hints as offline_hints
from kenning.providers.embedding import EmbeddingProvider
from kenning.providers.offline import OfflineProvider
from kenning.retrieval.config import PRESETS
from kenning.store import hints as hint_store
from kenning.workers.embedding_tracker import EmbeddingTrackerWorker
from kenning.workers.hints import HintsWorker


class HashingEmbedding(EmbeddingProvider):
    """A second, real (if simple) local model: feature hashing of words into 64 dims."""

    model_id = "hashing-64"
    dims = 64

    def embed_batch(self, texts):
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dims] += 1.0
        return out + 1e-3


def test_model_switch_reembeds_in_batches(kenning):
    ids = [kenning.remember(MemoryDraft(content=f"fact number {i} about Ansible roles")).id for i in range(5)]
    new_model = HashingEmbedding()
    stats = TrackerStats()
    first = refresh_cycle(kenning.db, new_model, 2, stats)
    assert first == {"refreshed": 2, "failed": 0, "remaining": 3, "model": "hashing-64"}
    worker = EmbeddingTrackerWorker(kenning.db, new_model, kenning.settings.pipeline.embedding_tracker)
    while worker.run_once() == 0.0:
        pass
    assert worker.stats()["queue_depth"] == 0 and worker.stats()["refreshed"] == 3
    conn = kenning.db.reader()
    models = {r[0] for r in conn.execute("SELECT embedding_model FROM memories WHERE id IN (%s)"
                                         % ",".join("?" * 5), ids)}
    assert models == {"hashing-64"}
    assert conn.execute("SELECT COUNT(*) FROM embeddings WHERE model = 'hashing-64'").fetchone()[0] == 5
    assert refresh_cycle(kenning.db, new_model, 8, stats)["refreshed"] == 0


def test_edited_content_is_reembedded(kenning):
    memory_id = kenning.remember(MemoryDraft(content="the cache TTL is five minutes")).id
    with kenning.db.with_write_tx() as conn:  # an edit that bypassed the write path's embedding
        conn.execute("UPDATE memories SET content = 'the cache TTL is ten minutes', content_hash = 'h2' WHERE id = ?",
                     (memory_id,))
    result = refresh_cycle(kenning.db, kenning.embedder, 8, TrackerStats())
    assert result["refreshed"] == 1 and result["remaining"] == 0


def test_offline_hints_are_deterministic_and_parse_defensively():
    payload = {"content": "We switched from MySQL to PostgreSQL for billing", "max": 4}
    assert offline_hints(payload) == offline_hints(payload)
    assert offline_hints(payload)[0] == "what do we know about MySQL?"
    assert parse_hints('<think>hmm</think>```json\n["a?", "b?", 3]\n```', 5) == (["a?", "b?"], [])
    assert parse_hints("not json at all", 5)[0] == []
    assert parse_hints('{"hints": ["x?", "y?", "z?"]}', 2)[0] == ["x?", "y?"]


def test_hints_worker_indexes_memories_for_recall(kenning):
    memory_id = kenning.remember(MemoryDraft(content="Grafana dashboards live in the ops repo")).id
    worker = HintsWorker(kenning.db, OfflineProvider(), kenning.settings.pipeline.hints)
    worker.run_once()
    hints = hint_store.hints_for(kenning.db.reader(), memory_id)
    assert "how do we use Grafana?" in hints and worker.stats()["hints_written"] >= 2
    hits = kenning.recall("how do we use", config=PRESETS["bm25"].with_(extras=PRESETS["hints"].extras),
                          limit=3, track_access=False)
    assert hits and hits[0].memory.id == memory_id
    worker.run_once()
    assert worker.stats()["processed"] == 1  # nothing left to do
