"""Lifecycle worker: the daily pruning / trust-promotion pass (kenning.observer.lifecycle.run)."""

from __future__ import annotations

from typing import Unpack

from kenning.core import telemetry
from kenning.core.config_observer import LifecycleSettings
from kenning.observer.lifecycle import LifecycleRun, run
from kenning.store.backend import StoreDatabase
from kenning.workers.base import Backoff, Worker, backoff_from_settings
from kenning.workers.deps import WorkerDeps


class LifecycleWorker(Worker):
    def __init__(self, db: StoreDatabase, cfg: LifecycleSettings, **kw: Unpack[Backoff]) -> None:
        super().__init__("lifecycle", interval_s=cfg.interval_hours * 3600.0, **kw)
        self.db = db
        self.cfg = cfg
        self.last_run: LifecycleRun | None = None

    def tick(self) -> float | None:
        self.last_run = last = run(self.db, self.cfg)
        self.counters["processed"] += 1
        if last["soft_deleted"] or last["confidence_raised"]:
            telemetry.log_event("lifecycle", "pruning pass", **last)
        return None

    def extra_stats(self) -> dict[str, object]:
        return {"last_run": self.last_run}


def build(deps: WorkerDeps) -> LifecycleWorker | None:
    cfg = deps.settings.observer.lifecycle
    if not cfg.enabled:
        return None
    return LifecycleWorker(deps.db, cfg, **backoff_from_settings(deps.settings.pipeline.worker))
