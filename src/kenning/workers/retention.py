"""Retention worker: runs kenning.pipeline.retention.sweep every `retention.interval_ms`
(6 h by default), sooner while a batch limit was hit."""

from __future__ import annotations

from typing import Any, Unpack

from kenning.core import telemetry
from kenning.core.config_pipeline import RetentionSettings
from kenning.pipeline.retention import sweep
from kenning.store.backend import StoreDatabase
from kenning.workers.base import Backoff, Worker, backoff_from_settings
from kenning.workers.deps import WorkerDeps

CATCH_UP_S = 5.0


class RetentionWorker(Worker):
    def __init__(self, db: StoreDatabase, cfg: RetentionSettings, **kw: Unpack[Backoff]) -> None:
        super().__init__("retention", interval_s=cfg.interval_ms / 1000.0, **kw)
        self.db = db
        self.cfg = cfg
        self.totals: dict[str, int] = {}
        self.last_sweep: dict[str, Any] | None = None

    def tick(self) -> float | None:
        result = sweep(self.db, self.cfg)
        self.last_sweep = result
        steps = result["steps"]
        for step, value in (steps.items() if isinstance(steps, dict) else ()):
            count = sum(value.values()) if isinstance(value, dict) else int(value)
            self.totals[step] = self.totals.get(step, 0) + count
        self.counters["processed"] += 1
        if any(self.totals.values()):
            telemetry.log_event("retention", "sweep", steps=result["steps"])
        return CATCH_UP_S if result["more"] else None

    def extra_stats(self) -> dict[str, object]:
        return {"totals": self.totals, "last_sweep": self.last_sweep}


def build(deps: WorkerDeps) -> RetentionWorker:
    pipeline = deps.settings.pipeline
    return RetentionWorker(deps.db, pipeline.retention, **backoff_from_settings(pipeline.worker))
