"""Ratings through kenning's MCP tool with the real Claude Code CLI (issue 32: feedback without clutter).

Claude Code (pinned in tests/harness/clis.py) runs headless against the scripted Anthropic server,
with kenning's hooks (`kenning connect claude-code`) and kenning's MCP server (user scope,
~/.claude.json, the entry `kenning connect mcp` prints). `kenning mcp` tells the daemon it is
connected in the session's directory, so the prompt's injection asks the model to rate through
`mcp__kenning__memory_feedback` instead of appending <memory-feedback> JSON to its answer; the
scripted model calls the tool, Claude Code runs it through the MCP server, and the rating reaches
the daemon's feedback path: it counts on the session's row like the tag's rating. Without the MCP
server the same prompt asks for the tag.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from kenning.hooks.install import mcp_server_entry
from kenning.sessions.inject import FEEDBACK_REQUEST
from bench.harnesses.daemon import start_daemon
from bench.harnesses.anthropic_server import AnthropicServer, tool
from bench.harnesses.claude_runner import ClaudeHome, Session
from tests.harness.require import require_cli

RATE_TOOL = "mcp__kenning__memory_feedback"
# the tag form of the rating request asks for a JSON object at the end of the answer (its first line's words)
TAG_REQUEST = "end it with ONLY a JSON object of scores"
assert TAG_REQUEST in FEEDBACK_REQUEST


@pytest.fixture(scope="module")
def claude() -> Path:
    return require_cli("claude-code")


@pytest.fixture(scope="module")
def kd(tmp_path_factory):
    proc = start_daemon(tmp_path_factory.mktemp("claude-mcp-daemon"))
    yield proc
    proc.stop()


def _repo(path: Path) -> Path:
    path.mkdir()
    (path / "README.md").write_text("ledger service\n")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    return path


def _home(root: Path, env: dict[str, str], *, with_mcp: bool) -> ClaudeHome:
    home = ClaudeHome(root)
    connected = home.connect(env)
    assert connected.returncode == 0, connected.stderr
    settings = json.loads(home.settings.read_text())
    settings.setdefault("permissions", {})["allow"] = [RATE_TOOL]
    home.settings.write_text(json.dumps(settings, indent=2))
    if with_mcp:  # user scope: what `claude mcp add --scope user` writes
        (root / ".claude.json").write_text(json.dumps({"mcpServers": {"kenning": mcp_server_entry(env)}}))
    return home


def _mcp_directories(kd) -> list[str]:
    with kd.client() as http:
        return http.get("/api/feedback/clients").json()["directories"]


def _wait(ready, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def _row(kd, key: str, memory_id: str, ready) -> dict:
    deadline = time.monotonic() + 60
    while True:
        with kd.client() as http:
            detail = http.get(f"/api/sessions/{key}").json()
        rows = {r["memory_id"]: r for r in detail.get("memories") or []}
        row = rows.get(memory_id) or {}
        if ready(row) or time.monotonic() > deadline:
            return row
        time.sleep(0.5)


def test_the_agent_rates_through_the_mcp_tool_and_the_rating_counts(claude, kd, tmp_path):
    env = {"KENNING_HOME": str(kd.home), "KENNING_PORT": str(kd.port)}
    repo = _repo(tmp_path / "ledger-repo")
    home = _home(tmp_path / "home", env, with_mcp=True)
    with kd.client() as http:
        note = http.post("/api/memory/remember", json={
            "content": "The ledger tests need LEDGER_TZ=UTC or the month-end rollover test fails",
            "importance": 0.9, "project": "ledger-repo", "pinned": True}).json()  # opens the session

    with AnthropicServer() as server, Session(claude, home, repo, server.url) as session:
        # Claude Code starts its MCP servers beside the session; a person types after they are up
        _wait(lambda: str(repo.resolve()) in _mcp_directories(kd))
        server.script(tool(RATE_TOOL, scores={note["id"]: 0.9}), "Set LEDGER_TZ=UTC and rerun the ledger tests.")
        turn = session.turn("The ledger tests fail on the month-end rollover again, why?")
        assert turn[-1].get("subtype") == "success", (turn[-1], session.stderr)
        results = [block for line in turn if line.get("type") == "user"
                   for block in (line.get("message") or {}).get("content") or [] if isinstance(block, dict)
                   and block.get("type") == "tool_result"]
        requests = server.model_requests()
        key = session.session_id
        row = _row(kd, key, note["id"], lambda r: r.get("agent_feedback_count"))

    asked = requests[0]
    text = asked.text()
    assert f"[{note['id']}]" in text  # the memory was shown (session start; the first prompt asks about it) ...
    assert RATE_TOOL in text and "memory_feedback" in text  # ... and the rating is asked through the tool
    assert TAG_REQUEST not in text  # not appended to the answer
    # Claude Code 2.1 defers MCP tools (a placeholder in `tools`; the model may call them by name)
    assert "DeferredToolPlaceholder" in {t.get("name") for t in asked.body.get("tools") or []} or \
        RATE_TOOL in {t.get("name") for t in asked.body.get("tools") or []}
    assert results and not any(r.get("is_error") for r in results), results
    # the tool call reached the daemon's feedback path and counts on the session's row
    assert row.get("agent_feedback_count") == 1 and row.get("agent_relevance_score") == pytest.approx(0.9), row


def test_without_the_mcp_server_the_prompt_asks_for_the_tag(claude, kd, tmp_path):
    env = {"KENNING_HOME": str(kd.home), "KENNING_PORT": str(kd.port)}
    repo = _repo(tmp_path / "ledger-plain")
    home = _home(tmp_path / "home-plain", env, with_mcp=False)
    with kd.client() as http:
        note = http.post("/api/memory/remember", json={
            "content": "The ledger-plain fixtures are regenerated with make fixtures", "importance": 0.9,
            "project": "ledger-plain"}).json()
    with AnthropicServer() as server, Session(claude, home, repo, server.url) as session:
        server.script(f'Run make fixtures. <memory-feedback>{{"{note["id"]}": 0.7}}</memory-feedback>')
        turn = session.turn("How are the ledger-plain fixtures regenerated?")
        assert turn[-1].get("subtype") == "success", (turn[-1], session.stderr)
        text = server.model_requests()[0].text()
    assert f"[{note['id']}]" in text and TAG_REQUEST in text
    assert RATE_TOOL not in text
