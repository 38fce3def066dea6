"""The worker catalogue and the WorkerManager the daemon starts in its lifespan.

`FACTORIES` names every background worker and its factory, explicitly: adding a worker is
one line here. Each factory takes the service's typed `WorkerDeps` (never the service)::

    def build(deps: WorkerDeps) -> Worker | None:   # None when disabled by config
        ...

Daemon lifespan (kenning.service builds the deps)::

    manager = WorkerManager(deps, FACTORIES)   # builds every worker (+ lease reaper)
    manager.start_all()
    ...
    manager.stop_all()

`manager.stats()` → {name: worker.stats()}; `manager.start(name)` / `manager.stop(name)`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping

from kenning.core import telemetry
from kenning.core.errors import NotFound
from kenning.workers import (aspect_feedback, documents, embedding_tracker, extraction, hints, lifecycle,
                             maintenance, retention, summaries)
from kenning.workers.base import LeaseReaper, Worker
from kenning.workers.deps import WorkerDeps, WorkerFactory

# With background threads running Python, a request thread waits for the GIL up to the switch
# interval (5 ms by default) each time it takes it back after I/O, and a recall takes it back dozens
# of times: with workers started the daemon switches every 1 ms (issue 36).
SWITCH_INTERVAL_S = 0.001

FACTORIES: dict[str, WorkerFactory] = {
    "aspect-feedback": aspect_feedback.build,
    "documents": documents.build,
    "embedding-tracker": embedding_tracker.build,
    "extraction": extraction.build,
    "hints": hints.build,
    "lifecycle": lifecycle.build,
    "maintenance": maintenance.build,
    "retention": retention.build,
    "summaries": summaries.build,
}


class WorkerManager:
    """Owns the daemon's background workers: build, start, stop, report."""

    def __init__(self, deps: WorkerDeps, factories: Mapping[str, WorkerFactory] = FACTORIES) -> None:
        self.deps = deps
        self._lock = threading.Lock()
        self.workers: dict[str, Worker] = {}
        self.disabled: list[str] = []
        self.build_errors: dict[str, str] = {}
        for name, factory in sorted(factories.items()):
            self._build(name, factory)
        w = deps.settings.pipeline.worker
        self.workers["lease-reaper"] = LeaseReaper(
            deps.db, lease_timeout_ms=w.lease_timeout_ms, interval_s=w.reaper_interval_ms / 1000.0
        )

    def _build(self, name: str, factory: WorkerFactory) -> None:
        try:
            worker = factory(self.deps)
        except Exception as exc:  # a broken worker must not keep the daemon from starting
            self.build_errors[name] = f"{type(exc).__name__}: {exc}"
            telemetry.record_error("workers", f"could not build worker {name}: {exc}", worker=name)
            return
        if worker is None:
            self.disabled.append(name)
        else:
            self.workers[name] = worker

    def get(self, name: str) -> Worker:
        try:
            return self.workers[name]
        except KeyError:
            raise NotFound(f"no worker named {name!r}; known: {sorted(self.workers)}") from None

    def start(self, name: str) -> None:
        self.get(name).start()

    def stop(self, name: str) -> None:
        self.get(name).stop()

    def start_all(self) -> None:
        if self.workers and sys.getswitchinterval() > SWITCH_INTERVAL_S:
            sys.setswitchinterval(SWITCH_INTERVAL_S)
        with self._lock:
            for worker in self.workers.values():
                worker.start()

    def stop_all(self, timeout_s: float = 10.0) -> None:
        with self._lock:
            for worker in self.workers.values():
                worker.stop(timeout_s)

    def stats(self) -> dict[str, dict[str, object]]:
        data = {name: worker.stats() for name, worker in sorted(self.workers.items())}
        for name in self.disabled:
            data[name] = {"name": name, "running": False, "disabled": True}
        for name, error in self.build_errors.items():
            data[name] = {"name": name, "running": False, "build_error": error}
        return data
