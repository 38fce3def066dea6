"""Worker registry and the WorkerManager the daemon starts in its lifespan.

Register a worker factory in any module of this package; the manager imports every
`kenning.workers.*` module on construction, so dropping a module in is enough::

    @register_worker("retention")
    def build(kenning) -> Worker | None:   # None when disabled by config
        ...

Daemon lifespan::

    manager = WorkerManager(kenning)       # builds every registered worker (+ lease reaper)
    manager.start_all()
    ...
    manager.stop_all()

`manager.stats()` → {name: worker.stats()}; `manager.start(name)` / `manager.stop(name)`.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Callable
from typing import Any

from kenning.core import telemetry
from kenning.core.errors import NotFound
from kenning.workers.base import LeaseReaper, Worker

WorkerFactory = Callable[[Any], "Worker | None"]

_REGISTRY: dict[str, WorkerFactory] = {}
_SKIP_MODULES = {"base", "manager"}


def register_worker(name: str) -> Callable[[WorkerFactory], WorkerFactory]:
    """Decorator: register `factory(kenning) -> Worker | None` under `name`."""

    def decorate(factory: WorkerFactory) -> WorkerFactory:
        _REGISTRY[name] = factory
        return factory

    return decorate


def registered() -> dict[str, WorkerFactory]:
    discover()
    return dict(_REGISTRY)


def discover() -> None:
    """Import every module in kenning.workers so their @register_worker calls run."""
    package = importlib.import_module("kenning.workers")
    for info in pkgutil.iter_modules(package.__path__):
        if info.name in _SKIP_MODULES or info.name.startswith("_"):
            continue
        importlib.import_module(f"kenning.workers.{info.name}")


class WorkerManager:
    """Owns the daemon's background workers: build, start, stop, report."""

    def __init__(self, kenning: Any, *, only: set[str] | None = None) -> None:
        self.kenning = kenning
        self._lock = threading.Lock()
        self.workers: dict[str, Worker] = {}
        self.disabled: list[str] = []
        self.build_errors: dict[str, str] = {}
        for name, factory in sorted(registered().items()):
            if only is not None and name not in only:
                continue
            self._build(name, factory)
        if only is None or "lease-reaper" in only:
            w = kenning.settings.pipeline.worker
            self.workers["lease-reaper"] = LeaseReaper(
                kenning.db, lease_timeout_ms=w.lease_timeout_ms, interval_s=w.reaper_interval_ms / 1000.0
            )

    def _build(self, name: str, factory: WorkerFactory) -> None:
        try:
            worker = factory(self.kenning)
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
        with self._lock:
            for worker in self.workers.values():
                worker.start()

    def stop_all(self, timeout_s: float = 10.0) -> None:
        with self._lock:
            for worker in self.workers.values():
                worker.stop(timeout_s)

    def stats(self) -> dict[str, dict[str, Any]]:
        data = {name: worker.stats() for name, worker in sorted(self.workers.items())}
        for name in self.disabled:
            data[name] = {"name": name, "running": False, "disabled": True}
        for name, error in self.build_errors.items():
            data[name] = {"name": name, "running": False, "build_error": error}
        return data
