"""`kenning recall --explain`: the effective recall config (config.yaml's recall settings merged with
the preset) printed with the results, by a real `kenning` process on the local store."""

from __future__ import annotations

import json

from tests.cli.test_cli_local_fast import run_local


def test_recall_explain_shows_the_presets_legs_with_the_users_rrf_k(tmp_path, unused_port):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("recall:\n  rrf_k: 12\n  candidate_pool: 40\n")
    assert run_local(home, unused_port, "remember", "Deploy with scripts/ship.sh")[0].returncode == 0
    result, _ = run_local(home, unused_port, "recall", "deploy ship", "--preset", "bm25", "--explain", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["config"] == {"preset": "bm25", "legs": ["bm25"], "stages": [], "rrf_k": 12, "candidate_pool": 40,
                             "diversity": False, "topic_diversity": {"threshold": 0.85, "decay": 0.5, "floor": 0.1},
                             "hints": False}
    assert [r["content"] for r in out["results"]] == ["Deploy with scripts/ship.sh"]
    result, _ = run_local(home, unused_port, "recall", "deploy ship", "--explain")
    assert result.returncode == 0, result.stderr
    assert "preset default" in result.stdout and "rrf_k 12" in result.stdout
    assert "stages session_context, provenance" in result.stdout and "scripts/ship.sh" in result.stdout
    result, _ = run_local(home, unused_port, "recall", "deploy", "--preset", "bm2")
    assert result.returncode == 2 and "unknown preset 'bm2'" in result.stderr


def test_recall_explain_through_a_daemon_shows_the_config_the_daemon_runs(daemon_factory):
    """The daemon read config.yaml when it started; --explain answers what it runs, not the file as it is
    now (a user who edits config.yaml without restarting sees the old figures, and why recall behaves so)."""
    import os
    import subprocess
    import sys

    daemon = daemon_factory("recall:\n  rrf_k: 12\n  candidate_pool: 40\n")
    (daemon.home / "config.yaml").write_text("recall:\n  rrf_k: 30\n  candidate_pool: 40\n")  # after its start

    def kenning(*args: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "KENNING_HOME": str(daemon.home), "KENNING_PORT": str(daemon.port)}
        return subprocess.run([sys.executable, "-m", "kenning", *args], env=env, capture_output=True, text=True,
                              timeout=180)

    assert kenning("remember", "Deploy with scripts/ship.sh").returncode == 0
    result = kenning("recall", "deploy ship", "--preset", "bm25", "--explain", "--json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["config"]["rrf_k"] == 12 and out["config"]["legs"] == ["bm25"]
    assert [r["content"] for r in out["results"]] == ["Deploy with scripts/ship.sh"]
    shown = kenning("recall", "deploy ship", "--explain")
    assert shown.returncode == 0 and "rrf_k 12" in shown.stdout and f"daemon http://127.0.0.1:{daemon.port}" in shown.stdout
    with daemon.client() as http:  # the route itself: a misspelt preset is a 422 naming the allowed ones
        bad = http.get("/api/memory/recall/config", params={"preset": "bm2"})
        assert bad.status_code == 422 and "bm25" in bad.text
        assert http.get("/api/memory/recall/config").json()["preset"] == "default"
