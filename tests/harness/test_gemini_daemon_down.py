"""With the daemon stopped, the real Gemini CLI tells the user — not the model — at session start (issue 35):
kenning's SessionStart hook answers `systemMessage`, which Gemini CLI 0.61.0 writes to the terminal (stderr in
headless mode); no model request carries it, and the session waits in the spool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.harnesses.daemon import free_port
from bench.harnesses.cli_runners import gemini_dirs as setup_home, run_gemini
from tests.harness.require import require_cli
from bench.harnesses.gemini_server import GeminiServer
from bench.harnesses.kenning_setup import connect


@pytest.fixture(scope="module")
def gemini_bin() -> Path:
    return require_cli("gemini")


def test_daemon_down_the_gemini_user_is_told_at_session_start(gemini_bin, tmp_path):
    home, work = setup_home(tmp_path, "proj-gemini-told")
    kenning_home = tmp_path / "kenning-home"
    connect("gemini", port=free_port(), KENNING_HOME=str(kenning_home), HOME=str(home))
    with GeminiServer() as server:
        server.script("hello")
        done = run_gemini(gemini_bin, home, work, server, "say hello")
        sent = [json.dumps(r.body) for r in server.model_requests()]
    assert done.returncode == 0, done.stderr[-2000:]
    assert "kenning: the daemon is not running" in done.stderr and "kenning daemon start" in done.stderr
    assert "daemon is not running" not in done.stdout
    assert sent and not any("daemon is not running" in body for body in sent)
    assert list((kenning_home / "spool").glob("*.json"))
