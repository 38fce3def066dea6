"""Bulk-write activity: background job workers step aside while an import is streaming in.

Raw-first means an import's job is to store and embed; extraction, re-embedding and other
enrichment can run when it is done. With the pipeline on, the extraction worker competing
for the same two cores cut a 5,000-memory `kenning import` through the daemon from 257/s
to 165/s. The write path calls `note_bulk_write()` for each large batch; lease workers wait
while `bulk_write_active()` (until `HOLD_S` after the last batch) and say so in their status.
"""

from __future__ import annotations

import threading
import time

BULK_BATCH = 64  # memories per remember_many call that count as a bulk write
HOLD_S = 2.0  # quiet time after the last bulk batch before workers lease again

_lock = threading.Lock()
_last_bulk = float("-inf")


def note_bulk_write(count: int) -> None:
    global _last_bulk
    if count >= BULK_BATCH:
        with _lock:
            _last_bulk = time.monotonic()


def bulk_write_active() -> bool:
    with _lock:
        return time.monotonic() - _last_bulk < HOLD_S
