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
