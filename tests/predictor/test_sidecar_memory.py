"""The sidecar's memory (issue 36): its guard process (predictor.guard) is forked before torch is
imported, so it does not hold a copy-on-write image of the sidecar's whole interpreter — which the
sidecar's own writes turned into ~110-150 MB of the guard's private memory."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kenning.predictor.client import SidecarClient, sidecar_argv

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the guard runs on Linux only")


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
