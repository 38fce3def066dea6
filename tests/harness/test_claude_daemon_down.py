"""With the daemon stopped, the real Claude Code CLI tells the user — not the model — at session start
(issue 35): kenning's SessionStart hook answers `systemMessage`, which Claude Code shows as the hook's
message, while the model's request carries no kenning text and the session is spooled for later."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.harnesses.daemon import free_port
from bench.harnesses.anthropic_server import AnthropicServer
from bench.harnesses.claude_runner import ClaudeHome, run_print
from tests.harness.require import require_cli
from tests.harness.test_claude_code import _repo


@pytest.fixture(scope="module")
def claude() -> Path:
    return require_cli("claude-code")


def test_daemon_down_the_user_is_told_at_session_start(claude, tmp_path):
    repo = _repo(tmp_path / "proj")
    home = ClaudeHome(tmp_path / "home")
    home.settings.write_text('{"model": "claude-scripted"}\n')
    khome = tmp_path / "khome"
    nobody = {"KENNING_HOME": str(khome), "KENNING_PORT": str(free_port())}  # no daemon listens
    assert home.connect(nobody).returncode == 0

    with AnthropicServer() as server:
        server.script("Hello.")
        code, lines, stderr = run_print(claude, home, repo, server.url, "Say hello.")
        requests = server.model_requests()
    assert code == 0, stderr
    starts = [line for line in lines if line.get("subtype") == "hook_response"
              and line.get("hook_event") == "SessionStart"]
    assert starts, [line.get("subtype") for line in lines]
    told = json.dumps(starts)
    assert "the daemon is not running" in told and "kenning daemon start" in told, starts
    # Claude Code took it as the hook's message to the user (its transcript's hook_system_message) ...
    shown = [json.loads(line)["attachment"] for path in (home.root / ".claude" / "projects").rglob("*.jsonl")
             for line in path.read_text().splitlines() if "hook_system_message" in line]
    assert [a["hookEvent"] for a in shown] == ["SessionStart"] and "kenning daemon start" in shown[0]["content"]
    # ... and the model's request carries none of it
    assert requests and not any("daemon is not running" in json.dumps(r.body) for r in requests)
    assert any((khome / "spool").rglob("*.json")), "the session start waits in the spool"
