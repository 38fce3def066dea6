"""/api/predictor over a real daemon (which spawns a real sidecar), and the CLI against it."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from kenning.predictor.synthetic import SyntheticUser
from kenning.store import predictor as store
from kenning.store.db import open_database


def wait_ready(http, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = http.get("/api/predictor/status").json()
        if status["sidecar"].get("ready"):
            return status
        time.sleep(0.2)
    raise AssertionError(f"sidecar never became ready: {status}")


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_predictor_api_and_cli(tmp_path, daemon_factory):
    daemon = daemon_factory()
    db = open_database(daemon.home / "memories.db")  # a second writer, as the tests' data source
    user = SyntheticUser(dims=384, seed=3)
    user.populate(db)
    sessions = [user.record_session(db, i) for i in range(15)]
    with daemon.client() as http:
        status = http.get("/api/predictor/status").json()
        # these sessions never passed through session end, so none is known usable: no sidecar yet
        assert status["param_count"] > 1_000_000 and status["mode"] == "collecting"
        assert status["status_line"] == "[predictor: collecting | 0/10 sessions | baseline only]"
        assert status["sidecar"]["running"] is False and "0 so far" in status["sidecar"]["waiting"]

        trained = http.post("/api/predictor/train").json()  # a manual train starts the sidecar
        assert trained["swapped"] is True and trained["model_version"] == 1
        sidecar_pid = wait_ready(http)["sidecar"]["pid"]

        key = sessions[3]["key"]
        with db.with_write_tx() as conn:
            ids = [store.insert_comparison(conn, {
                "session_key": s["key"], "predictor_ndcg": 0.5 + d, "baseline_ndcg": 0.5,
                "predictor_won": int(d > 0), "margin": d, "scorer_confidence": 0.85 if d else 0.4,
                "ema_updated": int(d != 0), "success_rate": 0.5, "alpha": 1.0,
                "predictor_top_ids": s["baseline"][:10], "baseline_top_ids": s["baseline"][:10],
                "relevance_scores": {}, "fts_overlap_score": 0.2,
                "created_at": f"2026-02-0{i + 1}T10:00:00.000Z"})
                for i, (s, d) in enumerate(zip(sessions[:5], [0.2, -0.1, 0.0, 0.05, -0.3]))]

        page = http.get("/api/predictor/comparisons", params={"limit": 2}).json()
        assert page["total"] == 5 and len(page["items"]) == 2
        assert page["items"][0]["created_at"] > page["items"][1]["created_at"]
        assert http.get("/api/predictor/comparisons", params={"winner": "predictor"}).json()["total"] == 2
        assert http.get("/api/predictor/comparisons", params={"winner": "tie"}).json()["total"] == 1
        assert http.get("/api/predictor/comparisons", params={"ema_updated": "false"}).json()["total"] == 1
        assert http.get("/api/predictor/comparisons", params={"min_margin": 0.15}).json()["total"] == 2
        dated = http.get("/api/predictor/comparisons", params={"since": "2026-02-02", "until": "2026-02-03T23:00:00Z"})
        assert dated.json()["total"] == 2
        bad = http.get("/api/predictor/comparisons", params={"winner": "nobody"})
        assert bad.status_code == 422 and "winner" in bad.json()["error"]
        assert http.get("/api/predictor/comparisons", params={"since": "yesterday"}).status_code == 400

        one = http.get(f"/api/predictor/comparisons/{ids[0]}").json()
        assert one["winner"] == "predictor" and len(one["candidates"]) == len(sessions[0]["candidates"])
        assert http.get("/api/predictor/comparisons/nope").status_code == 404

        audit = http.get(f"/api/predictor/audit/{key}").json()
        assert audit["comparison"]["id"] == ids[3] and audit["confidence_gate_passed"] is True
        assert len(audit["labels"]["labels"]) == len(sessions[3]["candidates"])
        assert http.get("/api/predictor/audit/unknown-session").status_code == 404

        training = http.get("/api/predictor/training").json()
        assert training["total"] == 1 and training["items"][0]["swapped"] is True
        assert training["items"][0]["canary_ndcg"] is not None and training["items"][0]["loss_curve"]
        drift = http.get("/api/predictor/drift").json()
        assert {"drift_signal", "history", "resets", "drift_resets"} <= set(drift)
        calib = http.post("/api/predictor/calibration", json={
            "session_key": key, "memory_id": sessions[3]["injected"][0], "human_label": 0.0}).json()
        assert calib["scorer_label"] is not None and calib["summary"]["labels"] == 1

        env = {**daemon.env, "COLUMNS": "250"}
        out = subprocess.run([sys.executable, "-m", "kenning", "predictor", "status", "--json"], env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["model_version"] == 1
        out = subprocess.run([sys.executable, "-m", "kenning", "predictor", "labels", key], env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and "used for training" in out.stdout
        out = subprocess.run([sys.executable, "-m", "kenning", "predictor", "compare", key], env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and "winner" in out.stdout
        assert "baseline top" in out.stdout and "predictor top" in out.stdout  # each ranking with memory text
        out = subprocess.run([sys.executable, "-m", "kenning", "predictor", "history"], env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0 and "manual" in out.stdout
    db.close()
    daemon.stop()
    assert not pid_alive(sidecar_pid)  # the daemon took its sidecar with it
