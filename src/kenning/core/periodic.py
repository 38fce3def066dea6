"""A daemon thread that calls one function at a fixed interval until it is stopped."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Periodic:
    def __init__(self, name: str, interval_s: float, tick: Callable[[], object]) -> None:
        self.name, self.interval_s, self.tick = name, interval_s, tick
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        def loop() -> None:
            while not self._stop.wait(self.interval_s):
                self.tick()

        self._thread = threading.Thread(target=loop, name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
