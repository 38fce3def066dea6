"""What the daemon is busy with, so background work steps aside for the agent (issue 36).

Bulk writes: raw-first means an import's job is to store and embed; extraction, re-embedding and
other enrichment can run when it is done. With the pipeline on, the extraction worker competing
for the same two cores cut a 5,000-memory `kenning import` through the daemon from 257/s to
165/s. The write path stores each batch inside `bulk_write()`; lease workers wait while
`bulk_write_active()` (until `HOLD_S` after the last large batch) and say so in their status.
`in_bulk_write()` tells the write path's in-transaction hooks that the memory being stored came
in a large batch (an import): its extraction job may then skip what is already known.

Foreground requests: the agent's hooks and recalls (api/foreground.py marks them). Background
workers run in the same process, so while one runs Python the request waits for the GIL: after a
20,000-memory import, recall took p50 54 / p95 140 ms while extraction drained, several times its
idle figure. Workers call `yield_to_foreground()` between jobs and between a job's stages: it
waits while a request is in flight or was within `QUIET_S`, at most `max_wait_s`, so the agent
goes first and the background still progresses under a steady stream of requests.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

BACKGROUND_NICE = 10  # background work's OS priority (nice): worker threads, a predictor fit's process
BULK_BATCH = 64  # memories per remember_many call that count as a bulk write
HOLD_S = 2.0  # quiet time after the last bulk batch before workers lease again
QUIET_S = 0.15  # a foreground request this recent still counts: agents send hooks and recalls in bursts
BURST_OVER_S = 10.0  # no foreground request for this long: the burst is over (core.heap trims, a due training run starts)
POLL_S = 0.01

_lock = threading.Lock()
_last_bulk = float("-inf")
_local = threading.local()
_in_flight = 0
_last_foreground = float("-inf")


def lower_priority(who: int = 0, nice: int = BACKGROUND_NICE) -> int | None:
    """Lower the OS priority of process or Linux thread `who` (0: this process; a thread id: that
    thread) to `nice`, never raise it; its nice value after, None where the OS has none."""
    try:
        os.setpriority(os.PRIO_PROCESS, who, min(19, max(os.getpriority(os.PRIO_PROCESS, who), nice)))
        return os.getpriority(os.PRIO_PROCESS, who)
    except (OSError, AttributeError):  # (Windows has no nice)
        return None


def note_bulk_write(count: int) -> None:
    if count >= BULK_BATCH:
        global _last_bulk
        with _lock:
            _last_bulk = time.monotonic()


@contextmanager
def bulk_write(count: int) -> Iterator[None]:
    """Around the storing of one batch of `count` memories: a large batch holds the lease workers
    (from its start to HOLD_S after its end, however slow it was) and marks this thread's writes
    as a bulk write meanwhile (`in_bulk_write`)."""
    note_bulk_write(count)
    _local.bulk = count >= BULK_BATCH
    try:
        yield
    finally:
        _local.bulk = False
        note_bulk_write(count)


def bulk_write_active() -> bool:
    with _lock:
        return time.monotonic() - _last_bulk < HOLD_S


def in_bulk_write() -> bool:
    """True in the thread that is storing a large batch (inside `bulk_write`)."""
    return bool(getattr(_local, "bulk", False))


def foreground_started() -> None:
    global _in_flight
    with _lock:
        _in_flight += 1


def foreground_ended() -> None:
    global _in_flight, _last_foreground
    with _lock:
        _in_flight = max(0, _in_flight - 1)
        _last_foreground = time.monotonic()


def last_foreground() -> float:
    """When the last foreground request ended (time.monotonic); -inf before the first."""
    with _lock:
        return _last_foreground


def foreground_active(quiet_s: float = QUIET_S) -> bool:
    """A foreground request is in flight, or one ended less than `quiet_s` ago."""
    with _lock:
        return _in_flight > 0 or time.monotonic() - _last_foreground < quiet_s


def yield_to_foreground(max_wait_s: float, stop: threading.Event | None = None, *, quiet_s: float = QUIET_S,
                        poll_s: float = POLL_S) -> float:
    """Wait while `foreground_active(quiet_s)`, at most `max_wait_s`, looking every `poll_s`; the
    seconds waited."""
    began = time.monotonic()
    while foreground_active(quiet_s) and time.monotonic() - began < max_wait_s:
        if stop is not None and stop.wait(poll_s):
            break
        if stop is None:
            time.sleep(poll_s)
    return time.monotonic() - began
