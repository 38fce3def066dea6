"""Embedding tracker (memory-pipeline-v2 "Embedding Tracker").

Each cycle finds live memories whose vector for the configured model is missing or stale
(edited content, or a model switch), newest first, at most `batch_size`; embeds them one at
a time outside any transaction (a failure counts and moves on); then writes all vectors in
one write transaction and stamps `memories.embedding_model`. Vectors are keyed by
(content_hash, model), so rows of the previous model stay until retention removes their
memories; recall always asks for the current model's vectors.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from kenning.core.clock import now_iso
from kenning.core.telemetry import record_error
from kenning.providers.embedding import EmbeddingProvider
from kenning.store import retention as ret_store
from kenning.store.backend import StoreDatabase
from kenning.store.vectors import upsert_embedding


@dataclass
class TrackerCycle(TypedDict):
    """What one tracker cycle did: memories re-embedded, failures, still queued, and the model."""

    refreshed: int
    failed: int
    remaining: int
    model: str


class TrackerStats:
    processed: int = 0
    failed: int = 0
    skipped_cycles: int = 0
    last_cycle_at: str | None = None
    queue_depth: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def refresh_cycle(db: StoreDatabase, embedder: EmbeddingProvider, batch_size: int, stats: TrackerStats) -> TrackerCycle:
    """One tracker cycle; returns what it did."""
    stats.last_cycle_at = now_iso()
    model = embedder.model_id
    rows = ret_store.stale_embedding_rows(db.reader(), model, batch_size)
    done: list[tuple[ret_store.StaleEmbedding, np.ndarray]] = []
    failed = 0
    for row in rows:
        try:
            done.append((row, embedder.embed(row["content"])))
        except Exception as exc:  # one bad fetch never aborts the cycle
            failed += 1
            record_error("embedding-tracker", f"embedding {row['id']} failed: {exc}", memory_id=row["id"])
    if done:
        with db.with_write_tx() as conn:
            for row, vector in done:
                upsert_embedding(conn, row["content_hash"], model, vector)
                ret_store.set_embedding_model(conn, row["id"], model)
    stats.processed += len(done)
    stats.failed += failed
    stats.queue_depth = ret_store.count_stale_embeddings(db.reader(), model)
    return {"refreshed": len(done), "failed": failed, "remaining": stats.queue_depth, "model": model}


def pending_notice(db: StoreDatabase, embedder: EmbeddingProvider) -> str | None:
    """One line for the daemon's start when memories lack a vector for the current model (a model or
    runtime switch, or raw-first writes); the tracker re-embeds them in the background."""
    stale = ret_store.count_stale_embeddings(db.reader(), embedder.model_id)
    if not stale:
        return None
    return (f"embedding model {embedder.model_id}: {stale} memories lack its vector and are re-embedded in the"
            f" background; until then the vector leg of recall does not see them (keyword search does)")
