"""The sidecar's memory (issue 36): its guard process (predictor.guard) is forked before torch is
imported, so it does not hold a copy-on-write image of the sidecar's whole interpreter — which the
sidecar's own writes turned into ~110-150 MB of the guard's private memory; and the history a fit
builds (and the daemon keeps) holds one small object per signal row, its keys shared."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kenning.predictor.client import SidecarClient, sidecar_argv
from kenning.predictor.history import load_all


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the guard runs on Linux only")
def test_the_guard_is_forked_before_torch_is_imported(pred_settings):
    client = SidecarClient(sidecar_argv(pred_settings.db_path, pred_settings.home / "m.bin"), score_timeout_ms=5000,
                           stderr_path=pred_settings.home / "sidecar.log")
    client.start(wait_ready=True)
    try:
        pid = client.pid
        assert pid is not None
        sidecar_maps = Path(f"/proc/{pid}/maps").read_text()
        guards = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        assert len(guards) == 1
        guard_maps = Path(f"/proc/{guards[0]}/maps").read_text()
    finally:
        client.stop()
    assert "libtorch" in sidecar_maps  # (the sidecar itself runs torch)
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
