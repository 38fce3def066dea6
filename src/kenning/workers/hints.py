"""Hints worker: generates prospective hints for memories that have none (hints.enabled).

Polls the backlog (newest memories without hints), asks the pipeline LLM outside any
transaction, stores the hints in one short write transaction per memory. Over the daily
token budget it waits (stats say why). A memory whose generation fails is skipped for the
worker's lifetime so one bad memory never blocks the rest.
"""

from __future__ import annotations

from typing import Unpack

from kenning.core.config_pipeline import HintSettings
from kenning.pipeline.hints import generate_hints
from kenning.providers.llm import BaseLLMProvider
from kenning.store import hints as hint_store
from kenning.store.backend import StoreDatabase
from kenning.workers.base import Backoff, Worker, backoff_from_settings
from kenning.workers.deps import WorkerDeps

BATCH = 8


class HintsWorker(Worker):
    def __init__(self, db: StoreDatabase, llm: BaseLLMProvider, cfg: HintSettings, **kw: Unpack[Backoff]) -> None:
        super().__init__("hints", interval_s=cfg.poll / 1000.0, **kw)
        self.db = db
        self.llm = llm
        self.cfg = cfg
        self.skipped: set[str] = set()
        self.hints_written = 0

    def tick(self) -> float | None:
        self.waiting = self.llm.blocked_reason()
        if self.waiting:
            return None
        backlog = [m for m in hint_store.memories_without_hints(self.db.reader(), BATCH + len(self.skipped))
                   if m["id"] not in self.skipped][:BATCH]
        for memory in backlog:
            try:
                hints, _warnings = generate_hints(self.llm, memory["content"], max_hints=self.cfg.max,
                                                  timeout_ms=self.cfg.timeout)
            except Exception as exc:  # recorded; this memory is skipped, the others go on
                self.skipped.add(memory["id"])
                self.counters["failed"] += 1
                self._note_error(f"hints for {memory['id']} failed: {exc}", memory_id=memory["id"])
                continue
            if not hints:
                self.skipped.add(memory["id"])
                continue
            with self.db.with_write_tx() as conn:
                self.hints_written += hint_store.add_hints(conn, memory["id"], hints, model=self.llm.model)
            self.counters["processed"] += 1
        return 0.0 if len(backlog) == BATCH else None

    def extra_stats(self) -> dict[str, object]:
        return {"hints_written": self.hints_written, "skipped_memories": len(self.skipped)}


def build(deps: WorkerDeps) -> HintsWorker | None:
    pipeline = deps.settings.pipeline
    if not pipeline.hints.enabled:
        return None
    return HintsWorker(deps.db, deps.llm, pipeline.hints, **backoff_from_settings(pipeline.worker))
