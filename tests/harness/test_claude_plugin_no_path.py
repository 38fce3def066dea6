"""The Claude Code plugin installed while `kenning` is not on PATH (issue 35): with the real Claude Code
CLI, the session start shows the user one message saying so (Claude Code's hook_system_message), the
other hooks stand down quietly (no hook error lines), and the model's request carries none of it."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from bench.harnesses.anthropic_server import AnthropicServer, claude_env
from tests.harness.require import require_cli
from tests.harness.test_claude_plugin import REPO, _run


@pytest.fixture(scope="module")
def claude():
    return require_cli("claude-code")


def test_plugin_without_kenning_on_path_tells_the_user_once(claude, tmp_path):
    home = tmp_path / "home"
    project = tmp_path / f"nopath-{uuid.uuid4().hex[:8]}"
    project.mkdir(parents=True)
    home.mkdir()
    with AnthropicServer() as server:
        env = claude_env(server.url, str(home), {"PATH": "/usr/bin:/bin"})  # no kenning anywhere on it
        _run([str(claude), "plugin", "marketplace", "add", str(REPO)], env, project)
        _run([str(claude), "plugin", "install", "kenning@kenning"], env, project)
        server.script("Hello.")
        done = _run([str(claude), "-p", "Say hello.", "--output-format", "stream-json", "--verbose"], env, project)
        sent = [json.dumps(r.body) for r in server.model_requests()]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    responses = [line for line in lines if line.get("subtype") == "hook_response"]
    assert responses and all(r["exit_code"] == 0 and not r.get("stderr") for r in responses), responses
    shown = [json.loads(line)["attachment"] for path in (home / ".claude" / "projects").rglob("*.jsonl")
             for line in path.read_text().splitlines() if "hook_system_message" in line]
    assert [a["hookEvent"] for a in shown] == ["SessionStart"], shown
    assert "not on PATH" in shown[0]["content"]
    assert sent and not any("not on PATH" in body for body in sent)
