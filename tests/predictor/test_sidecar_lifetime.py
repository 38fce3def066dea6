"""Issue 12 item 10 against real daemons: a SIGSTOPped predictor sidecar does not outlive a `kill -9`
of the daemon (predictor.guard), and a predictor disabled by crashes is red — the composite is
unhealthy, `kenning doctor` exits 2, and GET /api/predictor/status says the same."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except FileNotFoundError:
        return []


def _sidecar_pid(daemon, timeout: float = 120.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = daemon.get("/api/predictor/status").json()
        sidecar = status.get("sidecar") or {}
        if sidecar.get("pid") and sidecar.get("ready"):
            return int(sidecar["pid"])
        if not sidecar.get("pid"):  # a fresh home waits for training data: a manual train starts it
            httpx.post(f"{daemon.base_url}/api/predictor/train", timeout=180)  # spawns it (force)
        time.sleep(0.5)
    raise AssertionError(f"no ready sidecar: {status.get('sidecar')}")


def _wait(check, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def test_stopped_sidecar_dies_with_a_killed_daemon(daemon_factory):
    daemon = daemon_factory()
    sidecar = _sidecar_pid(daemon)
    guards = _children(sidecar)
    assert guards, "the sidecar runs its guard process"
    os.kill(sidecar, signal.SIGSTOP)
    try:
        daemon.proc.send_signal(signal.SIGKILL)
        daemon.proc.wait(timeout=30)
        assert _wait(lambda: not _alive(sidecar), 30), "a stopped sidecar outlived the daemon"
        assert _wait(lambda: not any(_alive(g) for g in guards), 10), "the guard outlived the sidecar"
    finally:
        if _alive(sidecar):
            os.kill(sidecar, signal.SIGKILL)


def test_crash_disabled_predictor_is_red_and_doctor_exits_2(daemon_factory):
    daemon = daemon_factory("predictor:\n  crash_disable_threshold: 1\n")
    sidecar = _sidecar_pid(daemon)
    os.kill(sidecar, signal.SIGKILL)
    assert _wait(lambda: daemon.get("/api/predictor/status").json()["sidecar"]["disabled"], 60)
    domain = daemon.get("/api/diagnostics/predictor").json()
    assert domain["status"] == "unhealthy" and domain["score"] == 0.0, domain
    assert "crash" in domain["summary"]
    status = daemon.get("/api/predictor/status").json()  # the same verdict as the doctor's, not "disabled"
    assert status["mode"] == "crash_disabled" and status["enabled"] is True, status["mode"]
    assert status["health"]["status"] == domain["status"] and status["health"]["score"] == domain["score"]
    assert status["health"]["reason"] == domain["summary"]
    report = daemon.get("/api/diagnostics").json()
    assert report["composite"]["status"] == "unhealthy"
    env = {**os.environ, "KENNING_HOME": str(daemon.home), "KENNING_PORT": str(daemon.port)}
    doctor = subprocess.run([sys.executable, "-m", "kenning", "doctor"], env=env, capture_output=True, text=True,
                            timeout=180)
    assert doctor.returncode == 2, doctor.stdout[-2000:]
    assert "predictor" in doctor.stdout and "unhealthy" in doctor.stdout
