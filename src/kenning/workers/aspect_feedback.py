"""Aspect-feedback worker: once a session has ended, its FTS-confirmed memories raise the
weight of their entity aspects; every N sessions stale aspects decay (graph.aspects)."""

from __future__ import annotations

from typing import Unpack

from kenning.graph.aspects import FeedbackConfig
from kenning.graph.aspects import apply_pending_sessions, feedback_config, feedback_telemetry
from kenning.store.backend import StoreDatabase
from kenning.workers.base import Backoff, Worker, backoff_from_settings
from kenning.workers.deps import WorkerDeps

INTERVAL_S = 30.0


class AspectFeedbackWorker(Worker):
    def __init__(self, db: StoreDatabase, cfg: FeedbackConfig, **kw: Unpack[Backoff]) -> None:
        super().__init__("aspect-feedback", interval_s=INTERVAL_S, **kw)
        self.db = db
        self.cfg = cfg

    def tick(self) -> float | None:
        done = apply_pending_sessions(self.db, self.cfg)
        self.counters["processed"] += len(done)
        return 0.0 if len(done) >= 20 else None

    def extra_stats(self) -> dict[str, object]:
        return {**feedback_telemetry()}


def build(deps: WorkerDeps) -> AspectFeedbackWorker | None:
    pipeline = deps.settings.pipeline
    if not pipeline.graph.enabled:
        return None
    return AspectFeedbackWorker(deps.db, feedback_config(pipeline.graph), **backoff_from_settings(pipeline.worker))
