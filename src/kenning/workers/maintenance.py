"""Maintenance worker: a Maintainer cycle every `autonomous.maintenance_interval_ms`.

With `autonomous.enabled: false` or `autonomous.frozen: true` the interval never starts
(start() is a no-op that says why), but `run_once()` / `tick()` stay callable on demand.
"""

from __future__ import annotations

from typing import Unpack

from kenning.core import telemetry
from kenning.core.config import Settings
from kenning.pipeline.maintenance import Maintainer
from kenning.workers.base import Backoff, Worker, backoff_from_settings
from kenning.workers.deps import WorkerDeps


class MaintenanceWorker(Worker):
    def __init__(self, maintainer: Maintainer, settings: Settings, **kw: Unpack[Backoff]) -> None:
        auto = settings.pipeline.autonomous
        super().__init__("maintenance", interval_s=auto.maintenance_interval_ms / 1000.0, **kw)
        self.maintainer = maintainer
        self.settings = settings

    @property
    def disabled_reason(self) -> str | None:
        auto = self.settings.pipeline.autonomous
        if not auto.enabled:
            return "autonomous.enabled is false"
        if auto.frozen:
            return "autonomous.frozen is true"
        return None

    def start(self) -> None:
        reason = self.disabled_reason
        if reason:
            self.waiting = f"interval not started: {reason}"
            telemetry.log_event("worker", f"maintenance interval not started ({reason})")
            return
        super().start()

    def tick(self) -> float | None:
        self.maintainer.cycle()
        self.counters["processed"] += 1
        return None

    def extra_stats(self) -> dict[str, object]:
        return {"mode": self.settings.pipeline.autonomous.maintenance_mode, **self.maintainer.stats()}


def build(deps: WorkerDeps) -> MaintenanceWorker:
    maintainer = Maintainer(deps.db, deps.settings, embedder=deps.embedder)
    return MaintenanceWorker(maintainer, deps.settings, **backoff_from_settings(deps.settings.pipeline.worker))
