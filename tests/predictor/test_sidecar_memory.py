"""The sidecar's memory (issue 36): it scores with numpy and never loads torch (~220 MB, ~70 more for
torch.optim) — each fit trains in a process of its own that is gone when the fit ends; its guard
process (predictor.guard) is forked before numpy is imported, so it does not hold a copy-on-write
image of the sidecar's whole interpreter; and the history a fit builds (and the daemon keeps)
holds one small object per signal row, its keys shared."""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from kenning.predictor import constants as C
from kenning.predictor.client import SidecarClient, sidecar_argv
from kenning.predictor.features import encode_b64
from kenning.predictor.history import load_all


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


def test_history_events_are_slotted_and_share_their_keys(pdb, user):
    for i in range(6):
        user.record_session(pdb, i)
    history = load_all(pdb.reader())
    events = [(memory_id, e) for memory_id, items in history.by_memory.items() for e in items]
    assert len(events) > 20
    assert not any(hasattr(e, "__dict__") for _, e in events)  # slots: no dict per signal row
    keys: dict[str, set[int]] = {}
    for _, e in events:
        keys.setdefault(e.session_key, set()).add(id(e.session_key))
    assert any(len([1 for _, e in events if e.session_key == k]) > 1 for k in keys)
    assert all(len(ids) == 1 for ids in keys.values())  # a session's key is one str, however many rows
    by_id = {memory_id: memory_id for memory_id in history.by_memory}
    assert all(m is by_id[m] for used in history.useful.values() for m in used)  # the same id objects
