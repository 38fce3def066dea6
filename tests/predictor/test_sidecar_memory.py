"""The sidecar's memory (issue 36): it scores with numpy and never loads torch (~220 MB, ~70 more for
torch.optim) — each fit trains in a process of its own that is gone when the fit ends; its guard
process (predictor.guard) is forked before numpy is imported, so it does not hold a copy-on-write
image of the sidecar's whole interpreter; and the history a fit builds (and the daemon keeps)
holds its signal rows as numpy columns, its keys shared."""

from __future__ import annotations

import sys
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from kenning.predictor import constants as C
from kenning.predictor.client import SidecarClient, sidecar_argv
from kenning.predictor.features import encode_b64
import kenning.predictor.history as history_module
from kenning.predictor.history import History, load_all
from kenning.store.predictor import SignalEvent, TimelineSession


def score_request() -> dict:
    rng = np.random.default_rng(4)
    return {"candidate_ids": [f"m{i}" for i in range(12)], "embedding_dims": 384,
            "candidate_embeddings_b64": encode_b64(rng.normal(size=(12, 384)).astype(np.float32)),
            "candidate_features": rng.normal(size=(12, C.N_FEATURES)).tolist(), "project": "kenning",
            "context_text": "fix the deploy script"}


def children(pid: int) -> list[str]:
    """The process's children, whichever of its threads started them."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += (task / "children").read_text().split()
        except OSError:  # the thread ended
            pass
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the guard runs on Linux only")
def test_the_sidecar_scores_and_trains_without_loading_torch(pred_settings, pdb, user):
    for i in range(6):
        user.record_session(pdb, i)
    client = SidecarClient(sidecar_argv(pred_settings.db_path, pred_settings.home / "m.bin"), score_timeout_ms=5000,
                           stderr_path=pred_settings.home / "sidecar.log")
    client.start(wait_ready=True)
    try:
        pid = client.pid
        assert pid is not None
        before = client.call("score", score_request(), timeout_s=30)
        training = ThreadPoolExecutor(1).submit(client.call, "train_from_db", {"epochs": 2}, 120)
        fits = {}  # the fit process, seen while it runs: its nice value
        while not training.done():
            for child in children(pid):
                try:
                    if b"kenning.predictor.fit" in Path(f"/proc/{child}/cmdline").read_bytes():
                        fits[child] = int(Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[16])
                except (OSError, IndexError, ValueError):
                    pass
            time.sleep(0.02)
        trained = cast(dict, training.result())
        after = client.call("score", score_request(), timeout_s=30)
        sidecar_maps = Path(f"/proc/{pid}/maps").read_text()
        guards = children(pid)  # the fit process has exited: only the guard is left
        guard_maps = Path(f"/proc/{guards[0]}/maps").read_text()
    finally:
        client.stop()
    assert trained["swapped"] is True and trained["steps"] > 0 and trained["model_version"] == 1
    assert len(fits) == 1 and all(nice >= 10 for nice in fits.values())  # one fit, at background priority
    assert cast(dict, after)["model_version"] == 1 and cast(dict, after)["scores"] != cast(dict, before)["scores"]
    assert "libtorch" not in sidecar_maps and "_multiarray_umath" in sidecar_maps  # numpy, not torch
    assert len(guards) == 1
    assert "libtorch" not in guard_maps and "numpy" not in guard_maps


def test_history_holds_its_events_as_columns_and_shares_its_keys(pdb, user):
    """A History keeps a few dozen bytes a signal row (numpy columns), not an object each (~80 bytes):
    at a million memories 388k rows held 37 MB as objects, 13 MB as columns."""
    rows = 30_000
    # the keys as a store's rows bring them (interned already: the interpreter's table does not grow
    # under the measurement)
    events: list[SignalEvent] = [
        {"session_key": sys.intern(f"s{i % 600:04d}"), "memory_id": sys.intern(f"m{(i * 7) % 3000:05d}"),
         "started_at": f"2026-01-{1 + i % 28:02d}T10:00:00Z",
         "agent": 0.9 if i % 5 == 0 else None, "ratings": int(i % 5 == 0), "fts": i % 3, "touched": 0}
        for i in range(rows)]
    sessions: list[TimelineSession] = [{"session_key": f"s{i:04d}", "project": "p", "started_at": f"2026-01-{1 + i % 28:02d}T10:00:00Z",
                                        "ended": 1} for i in range(600)]
    mine = [tracemalloc.Filter(True, history_module.__file__)]  # not another test's threads in this process
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot().filter_traces(mine)
        history = History.build(iter(events), sessions)
        held = sum(stat.size_diff for stat in tracemalloc.take_snapshot().filter_traces(mine).compare_to(before, "filename"))
    finally:
        tracemalloc.stop()
    assert sum(len(history.events(m)) for m in history.memory_ids()) == rows
    assert held / rows < 45, f"{held / rows:.0f} bytes a signal row"

    for i in range(6):
        user.record_session(pdb, i)
    history = load_all(pdb.reader())
    ids = {memory_id: memory_id for memory_id in history.memory_ids()}
    assert len(ids) > 5
    assert all(m is ids[m] for used in history.useful.values() for m in used)  # the same id objects
    keys = {e.session_key for m in ids for e in history.events(m)}
    assert all(history.keys[history.numbers[k]] is k for k in keys)  # a session's key is one str
