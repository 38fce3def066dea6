"""core.heap: freed heap memory goes back to the OS once a burst of requests is over (issue 36)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from kenning.core import activity
from kenning.core.heap import Trimmer
from tests.predictor.test_predictor_sidecar import wait_for

_FREED_THEN_RELEASED = r"""
import ctypes
from kenning.core.heap import release
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
blocks = []
for _ in range(3000):  # 96 MB in 32 KB blocks (under the mmap threshold: from the heap), touched
    p = libc.malloc(32768)
    ctypes.memset(p, 1, 32768)
    blocks.append(p)
for p in blocks[:-1]:  # all but the last: the free space is not at the heap's top, glibc keeps it
    libc.free(p)
held = rss()
print(held, release(), rss())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_release_hands_freed_heap_pages_back():
    out = subprocess.run([sys.executable, "-c", _FREED_THEN_RELEASED], capture_output=True, text=True, timeout=60,
                         check=True)
    held, released, after = out.stdout.split()
    assert released == "True"
    assert int(held) - int(after) > 60  # MB: most of the 96 freed


def test_the_trimmer_trims_once_after_each_burst_and_never_during_one():
    calls: list[float] = []
    trimmer = Trimmer(quiet_s=0.2, check_s=0.02, trim=lambda: calls.append(time.monotonic()) or True)
    trimmer.start()
    try:
        time.sleep(0.3)
        assert calls == []  # no request yet: nothing to hand back
        activity.foreground_started()  # a request in flight
        time.sleep(0.4)
        assert calls == []  # never while a request runs
        activity.foreground_ended()
        ended = time.monotonic()
        assert wait_for(lambda: len(calls) == 1)
        assert calls[0] - ended >= 0.2  # after the quiet time
        time.sleep(0.4)
        assert len(calls) == 1  # once per burst
        for _ in range(3):  # the next burst: three requests
            activity.foreground_started()
            activity.foreground_ended()
        assert wait_for(lambda: len(calls) == 2)
        assert trimmer.trims == 2
    finally:
        trimmer.stop()
