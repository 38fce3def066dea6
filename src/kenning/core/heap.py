"""Freed heap memory back to the operating system, once a burst is over (issue 36).

glibc keeps what Python and the C libraries free in its heaps — one per thread that allocates, and
each thread of the request pool gets one — until `malloc_trim` hands the free pages back. A daemon
therefore keeps the high-water mark of its busiest minute: after a 50-agent burst at a million
memories a daemon process held 317-319 MB, 250-251 MB after one trim. `Trimmer` trims once no
foreground request (core.activity) has run for `quiet_s` since the last one it saw, and the predictor
trims before a training run starts its fit process, so the two peaks do not add up. A trim costs a
walk of the free lists (milliseconds) and is skipped while requests run. Where the C library is not
glibc (macOS, musl) `release` does nothing.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from kenning.core import activity
from kenning.core.periodic import Periodic

CHECK_S = 5.0


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim  # glibc's
    except (AttributeError, OSError):
        return None


_TRIM = _malloc_trim()


def release() -> bool:
    """Return the heaps' free pages to the OS; True when some were returned (glibc only)."""
    return bool(_TRIM(0)) if _TRIM is not None else False


class Trimmer:
    """A daemon thread that calls `trim` once after each burst of foreground requests."""

    def __init__(self, *, quiet_s: float = activity.BURST_OVER_S, check_s: float = CHECK_S,
                 trim: Callable[[], bool] = release) -> None:
        self.quiet_s, self.trim = quiet_s, trim
        self.trims = 0
        self._seen = activity.last_foreground()  # requests before the start are not a burst of ours
        self._loop = Periodic("heap-trimmer", check_s, self.check)

    def check(self) -> bool:
        """Trim now if a request ran since the last trim and none for `quiet_s`; whether it did."""
        last = activity.last_foreground()
        if last <= self._seen or activity.foreground_active(self.quiet_s):
            return False
        self._seen = last
        self.trim()
        self.trims += 1
        return True

    def start(self) -> None:
        self._loop.start()

    def stop(self) -> None:
        self._loop.stop()
