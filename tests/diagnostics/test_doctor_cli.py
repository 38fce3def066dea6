"""`kenning doctor` and `kenning dashboard` as a user runs them (real processes)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

from bench.harnesses.daemon import free_port


def run(home, *args, port=None):
    env = {**os.environ, "KENNING_HOME": str(home), "KENNING_PORT": str(port or free_port())}
    return subprocess.run([sys.executable, "-m", "kenning", *args], env=env, capture_output=True,
                          text=True, timeout=300)


def test_doctor_against_the_daemon_prints_domains_and_fixes(obs_daemon, http):
    http.post("/api/memory/remember", json={"content": "Doctor sees this memory"}).raise_for_status()
    out = run(obs_daemon.home, "doctor", port=obs_daemon.port)
    assert out.returncode == 0, out.stderr
    assert f"daemon {obs_daemon.base_url}" in out.stdout
    for domain in ("queue", "storage", "index", "provider", "mutation", "duplicate", "connector", "predictor"):
        assert domain in out.stdout
    assert "[connector] no session has reached the daemon yet" in out.stdout
    assert "fix: start an agent session" in out.stdout
    report = json.loads(run(obs_daemon.home, "doctor", "--json", port=obs_daemon.port).stdout)
    assert report["domains"]["index"]["status"] == "healthy"


def test_doctor_offline_goes_red_with_exit_2_and_fix_repairs(tmp_path):
    home = tmp_path / "home"
    stored = run(home, "remember", "Written offline before the bug", "--json")
    assert stored.returncode == 0, stored.stderr
    conn = sqlite3.connect(home / "memories.db")
    conn.executescript("DROP TRIGGER memories_fts_ai;")
    conn.close()
    assert run(home, "remember", "Written offline after the trigger vanished").returncode == 0
    out = run(home, "doctor")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "local store" in out.stdout and "unhealthy" in out.stdout
    assert "full-text index out of sync" in out.stdout and "fix: rebuild it: `kenning doctor --fix`" in out.stdout
    fixed = run(home, "doctor", "--fix", "--json")
    report = json.loads(fixed.stdout)
    assert fixed.returncode == 0 and report["domains"]["index"]["status"] == "healthy"
    assert report["repairs"][0] == {"action": "rebuild_fts", "fts_rows": 2, "fts_missing": 0}


def test_dashboard_command_prints_the_url(obs_daemon):
    out = run(obs_daemon.home, "dashboard", "--no-open", port=obs_daemon.port)
    assert out.returncode == 0 and out.stdout.strip() == f"{obs_daemon.base_url}/"


def test_dashboard_command_without_daemon_says_how_to_start_it(tmp_path):
    out = run(tmp_path / "home", "dashboard", "--no-open")
    assert out.returncode == 1 and "kenning daemon start" in out.stderr
