"""Embedding-tracker worker: re-embeds missing/stale vectors (e.g. after a model switch)
in small batches every `embedding_tracker.poll_ms`, draining at once while work remains."""

from __future__ import annotations

from typing import Unpack

from kenning.core.activity import yield_to_foreground
from kenning.core.config_pipeline import EmbeddingTrackerSettings
from kenning.pipeline.embedding_tracker import TrackerStats, refresh_cycle
from kenning.providers.embedding import EmbeddingProvider
from kenning.store.backend import StoreDatabase
from kenning.workers.base import FOREGROUND_MAX_WAIT_S, Backoff, Worker, backoff_from_settings
from kenning.workers.deps import WorkerDeps


class EmbeddingTrackerWorker(Worker):
    def __init__(self, db: StoreDatabase, embedder: EmbeddingProvider, cfg: EmbeddingTrackerSettings, **kw: Unpack[Backoff]) -> None:
        super().__init__("embedding-tracker", interval_s=cfg.poll_ms / 1000.0, **kw)
        self.db = db
        self.embedder = embedder
        self.cfg = cfg
        self.tracker = TrackerStats()
        self.yielded_s = 0.0

    def tick(self) -> float | None:
        self.yielded_s += yield_to_foreground(FOREGROUND_MAX_WAIT_S, self._stop)  # the agent's requests go first
        result = refresh_cycle(self.db, self.embedder, self.cfg.batch_size, self.tracker)
        self.counters["processed"] += result["refreshed"]
        self.counters["failed"] += result["failed"]
        return 0.0 if result["refreshed"] and result["remaining"] else None

    def extra_stats(self) -> dict[str, object]:
        t = self.tracker
        return {"refreshed": t.processed, "fetch_failures": t.failed, "skipped_cycles": t.skipped_cycles,
                "last_cycle_at": t.last_cycle_at, "queue_depth": t.queue_depth, "model": self.embedder.model_id,
                "yielded_s": round(self.yielded_s, 2)}


def build(deps: WorkerDeps) -> EmbeddingTrackerWorker | None:
    pipeline = deps.settings.pipeline
    if not pipeline.embedding_tracker.enabled:
        return None
    return EmbeddingTrackerWorker(deps.db, deps.embedder, pipeline.embedding_tracker,
                                  **backoff_from_settings(pipeline.worker))
