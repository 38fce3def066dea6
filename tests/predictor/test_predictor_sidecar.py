"""The real sidecar process: protocol, read-only database, supervision, no orphans."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from kenning.predictor import constants as C
from kenning.predictor.client import SidecarClient, sidecar_argv
from kenning.predictor.features import encode_b64

DIMS = 384


def score_params(n: int = 20, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    return {
        "candidate_ids": [f"m{i}" for i in range(n)], "embedding_dims": DIMS,
        "candidate_embeddings_b64": encode_b64(rng.normal(size=(n, DIMS)).astype(np.float32)),
        "candidate_features": rng.normal(size=(n, C.N_FEATURES)).tolist(), "project": "kenning",
        "context_text": "fix the deploy script",
    }


def wait_for(predicate, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def rpc(proc: subprocess.Popen, obj: dict | str) -> dict:
    proc.stdin.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def test_protocol_methods_and_errors(tmp_path: Path):
    argv = sidecar_argv(None, tmp_path / "model.bin", native_dim=DIMS)
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        status = rpc(proc, {"jsonrpc": "2.0", "id": 1, "method": "status"})["result"]
        assert status["param_count"] > 1_000_000 and status["model_ready"] is False
        scored = rpc(proc, {"jsonrpc": "2.0", "id": "req-2", "method": "score", "params": score_params()})
        assert scored["id"] == "req-2" and len(scored["result"]["scores"]) == 20
        assert scored["result"]["model_ready"] is False
        listed = dict(score_params(3))
        listed.pop("candidate_embeddings_b64")
        listed["candidate_embeddings"] = np.ones((3, DIMS)).tolist()
        assert len(rpc(proc, {"jsonrpc": "2.0", "id": 3, "method": "score", "params": listed})["result"]["scores"]) == 3
        assert rpc(proc, "{not json")["error"]["code"] == -32700
        assert rpc(proc, {"jsonrpc": "2.0", "id": 4, "method": "nope"})["error"]["code"] == -32601
        bad = rpc(proc, {"jsonrpc": "2.0", "id": 5, "method": "score",
                         "params": {**score_params(3), "candidate_features": [[1.0]]}})
        assert bad["error"]["code"] == -32602
        saved = rpc(proc, {"jsonrpc": "2.0", "id": 6, "method": "save_checkpoint"})["result"]
        assert Path(saved["path"]).read_bytes()[:4] == b"SGPT"
        labels = np.linspace(0, 1, 20).tolist()
        trained = rpc(proc, {"jsonrpc": "2.0", "id": 7, "method": "train",
                             "params": {"sessions": [{**score_params(20, s), "labels": labels} for s in range(4)]}})
        assert trained["result"]["steps"] > 0 and trained["result"]["gates"]["finite"] is True
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0  # stdin EOF ⇒ clean exit


def db_fingerprint(path: Path) -> dict[str, str]:
    out = {}
    for suffix in ("", "-wal"):
        f = Path(str(path) + suffix)
        if f.exists():
            out[suffix] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


def test_sidecar_trains_from_the_database_without_writing_it(pred_settings, pdb, user):
    for i in range(24):
        user.record_session(pdb, i)
    before = db_fingerprint(pred_settings.db_path)
    client = SidecarClient(sidecar_argv(pred_settings.db_path, pred_settings.home / "model.bin"),
                           score_timeout_ms=5000)
    client.start(wait_ready=True)
    try:
        result = client.call("train_from_db", {"epochs": 3}, timeout_s=120)
        assert result["samples_used"] >= 24 and result["swapped"] is True
        newest = pdb.reader().execute("SELECT MAX(started_at) FROM sessions").fetchone()[0]
        assert result["trained_through"] == newest  # scoring treats memories created after it as unseen
        assert result["checkpoint_saved"] and (pred_settings.home / "model.bin").exists()
        assert client.score(score_params())["model_ready"] is True
        assert client.call("status")["model_version"] == 1
    finally:
        client.stop()
    assert db_fingerprint(pred_settings.db_path) == before
    from kenning.core.errors import StoreError
    from kenning.store.db import Database
    ro = Database(pred_settings.db_path, read_only=True)  # the handle the sidecar uses
    with pytest.raises(Exception):
        ro.reader().execute("INSERT INTO predictor_state(key, value, updated_at) VALUES ('x', '{}', 'now')")
    with pytest.raises(StoreError):
        with ro.with_write_tx():
            pass
    ro.close()


def faulty(tmp_path: Path, mode: str, fault_file: Path | None = None, threshold: int = 3) -> SidecarClient:
    extra = ["--fault", mode] + (["--fault-file", str(fault_file)] if fault_file else [])
    return SidecarClient(sidecar_argv(None, None, native_dim=DIMS, extra=extra), score_timeout_ms=120,
                         crash_disable_threshold=threshold, stderr_path=tmp_path / "sidecar.log")


@pytest.mark.parametrize("mode", ["hang", "crash", "garbage"])
def test_misbehaving_sidecar_means_baseline_then_restart_then_disabled(tmp_path: Path, mode: str):
    client = faulty(tmp_path, mode)
    client.start(wait_ready=True)
    pids = set()
    try:
        deadline = time.monotonic() + 180  # three spawns on a loaded box
        while time.monotonic() < deadline:
            if client.disabled:
                break
            # Read the pid once, before `ready`: a process that just exited has no pid while its
            # reader thread has not yet cleared `ready` (seen under load). Only this loop's scores
            # make a process fail, and it scores only one whose pid it recorded, so no process
            # escapes the count below.
            pid = client.pid
            if pid is not None and client.ready:
                pids.add(pid)
                assert client.score(score_params()) is None  # the caller falls back to the baseline
            time.sleep(0.05)
        assert client.disabled, client.state()
        assert client.crashes_last_hour() == 3 and client.restarts == 2 and len(pids) == 3
        assert client.score(score_params()) is None  # disabled: answers at once, no process
        assert client.pid is None
        assert wait_for(lambda: not any(pid_alive(p) for p in pids), 10)
        if mode == "hang":
            assert client.timeouts >= 2
        if mode == "garbage":
            assert client.parse_errors >= 3
    finally:
        client.stop()


def test_a_restarted_sidecar_serves_again(tmp_path: Path):
    fault_file = tmp_path / "fault-on"
    fault_file.touch()
    client = faulty(tmp_path, "crash", fault_file)
    client.start(wait_ready=True)
    try:
        first = client.pid
        assert client.score(score_params()) is None
        fault_file.unlink()
        assert wait_for(lambda: client.ready and client.pid not in (None, first), 30)
        result = client.score(score_params())
        assert result is not None and len(result["scores"]) == 20
        assert client.restarts == 1 and not client.disabled
    finally:
        client.stop()
    assert not pid_alive(first)


def test_stop_leaves_no_process(tmp_path: Path):
    client = SidecarClient(sidecar_argv(None, None, native_dim=DIMS))
    client.start(wait_ready=True)
    pid = client.pid
    client.stop()
    assert pid is not None and not pid_alive(pid)


def test_sidecar_exits_when_its_parent_dies(tmp_path: Path):
    """The parent is SIGKILLed (no cleanup at all); the sidecar notices and exits."""
    pid_file = tmp_path / "sidecar.pid"
    code = (
        "import os, subprocess, sys, time\n"
        f"p = subprocess.Popen({sidecar_argv(None, None, native_dim=DIMS)!r}, stdin=subprocess.PIPE,"
        " env={**os.environ, 'KENNING_SIDECAR_PARENT': str(os.getpid())})\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code])
    try:
        assert wait_for(pid_file.exists, 30)
        child = int(pid_file.read_text())
        assert wait_for(lambda: pid_alive(child), 10)
        time.sleep(1.0)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert wait_for(lambda: not pid_alive(child), 15)
    finally:
        if parent.poll() is None:
            parent.kill()


def test_the_seeds_own_wire_format_is_accepted():
    """score with a `signals` block and train with no candidate ids, exactly as the seed writes them."""
    proc = subprocess.Popen(sidecar_argv(None, None, native_dim=8), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    try:
        emb = np.random.default_rng(0).normal(size=(3, 8)).tolist()
        scored = rpc(proc, {"jsonrpc": "2.0", "id": "req-1", "method": "score", "params": {
            "context_embedding": emb[0], "candidate_ids": ["mem_1", "mem_2", "mem_3"], "candidate_embeddings": emb,
            "signals": {"time_of_day": 0.25, "day_of_week": 2, "month_of_year": 1, "project": "signetai",
                        "session_gap_hours": 8.5, "is_superseded": [False, False, True]}}})
        assert [s["id"] for s in scored["result"]["scores"]] == ["mem_1", "mem_2", "mem_3"]
        trained = rpc(proc, {"jsonrpc": "2.0", "id": "req-2", "method": "train", "params": {
            "context_embedding": emb[0], "candidate_embeddings": emb, "labels": [1.0, 0.0, 0.8],
            "continuity_score": 0.85}})
        assert trained["result"]["loss"] is not None and trained["result"]["steps"] > 0
        status = rpc(proc, {"jsonrpc": "2.0", "id": "req-3", "method": "status"})["result"]
        assert status["trained"] is True and status["model_version"] == 1
    finally:
        proc.stdin.close()
        proc.wait(timeout=20)
