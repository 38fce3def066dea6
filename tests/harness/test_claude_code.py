"""kenning with the real Claude Code CLI (npm @anthropic-ai/claude-code, pinned in tests/harness/clis.py),
headless against a scripted local Anthropic server, hooks installed by `kenning connect claude-code`.

One daemon for the module. What a user would see:
- a stored memory reaches the model's request at session start and, for a memory stored mid-session,
  at the prompt;
- a tool call and a failing tool (Bash exit 1) reach the observer: the failure then the fix is an
  error_retry signal;
- session end stores the conversation's episodes (the first exchange with its answer) and no harness
  text anywhere but the raw transcript kept for the record;
- with the daemon down every hook exits 0 in time and Claude Code answers; uninstall gives the
  settings file back byte for byte.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from bench.harnesses.daemon import free_port, start_daemon
from bench.harnesses.anthropic_server import AnthropicServer, tool
from bench.harnesses.claude_runner import ClaudeHome, Session, run_print
from bench.harnesses.clis import version
from tests.harness.require import require_cli

HARNESS_TEXT = ("system-reminder", "gitStatus", "kenning-memories", "memory-feedback", "hook_context",
                "Attribution for git commits", "hook additional context")
CHECK = "import pathlib, sys\nif not pathlib.Path('deploy.toml').exists():\n    sys.exit('ValueError: deploy.toml is missing')\nprint('config ok')\n"


@pytest.fixture(scope="module")
def claude() -> Path:
    return require_cli("claude-code")


@pytest.fixture(scope="module")
def kd(tmp_path_factory):
    proc = start_daemon(tmp_path_factory.mktemp("claude-daemon"))
    yield proc
    proc.stop()


def _kenning_env(kd) -> dict[str, str]:
    return {"KENNING_HOME": str(kd.home), "KENNING_PORT": str(kd.port)}


def _poll(fetch, ready, timeout: float = 90.0):
    deadline = time.monotonic() + timeout
    value = fetch()
    while not ready(value) and time.monotonic() < deadline:
        time.sleep(0.5)
        value = fetch()
    return value


def _repo(path: Path) -> Path:
    path.mkdir()
    (path / "check.py").write_text(CHECK)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "add", "."], cwd=path, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"],
                   cwd=path, check=True)
    return path


def test_a_real_session_injects_observes_and_stores_no_harness_text(claude, kd, tmp_path):
    repo = _repo(tmp_path / "payments-repo")
    home = ClaudeHome(tmp_path / "home")
    connected = home.connect(_kenning_env(kd))
    assert connected.returncode == 0 and "PostToolUseFailure" in connected.stdout, connected.stderr
    with kd.client() as http:
        deploy = http.post("/api/memory/remember", json={
            "content": "Deploy the payments service with scripts/deploy-payments.sh", "importance": 0.9,
            "project": "payments-repo", "applies": "project"}).json()  # a project rule opens sessions (issue 31)

    with AnthropicServer() as server, Session(claude, home, repo, server.url) as session:
        server.script(
            ["Let me check the config.", tool("Bash", command="python3 check.py", description="check config")],
            tool("Bash", command="echo 'name = \"payments\"' > deploy.toml", description="write config"),
            tool("Bash", command="python3 check.py", description="check again"),
            "Deploy it with scripts/deploy-payments.sh once check.py passes.",
        )
        first = session.turn("How do we deploy the payments service?")
        assert first[-1].get("subtype") == "success", first[-1]
        with kd.client() as http:  # stored mid-session: only the prompt hook can bring it
            bastion = http.post("/api/memory/remember", json={
                "content": "The staging database is reached through the bastion host bastion-7.internal",
                "importance": 0.9, "project": "payments-repo"}).json()
        server.script("Go through bastion-7.internal.")
        second = session.turn("How do I reach the staging database through the bastion?")
        assert second[-1].get("subtype") == "success", second[-1]
        assert session.close() == 0, session.stderr
        requests = server.model_requests()

    # session start and prompt injections reach the model's request (as Claude Code's reminders)
    opening = requests[0].text()
    assert "SessionStart hook additional context" in opening and f"[{deploy['id']}]" in opening
    last = requests[-1].text()
    assert "UserPromptSubmit hook additional context" in last and f"[{bastion['id']}]" in last
    assert not any(f"[{bastion['id']}]" in r.text() for r in requests[:-1])

    # the tool calls and the failing one reached the observer: fail → fix → pass is an error_retry
    key = session.session_id
    with kd.client() as http:
        observed = _poll(lambda: http.get(f"/api/observer/sessions/{key}").json(),
                         lambda o: bool(o.get("finished")) and o.get("signals") is not None)
        assert observed["finished"]["tool_calls"] == 3
        retry = [s for s in observed["signals"] if s["signal_class"] == "error_retry"]
        assert retry and "deploy.toml is missing" in json.dumps(retry[0])

        # session end: the episodes of the conversation, the first exchange with its answer
        detail = _poll(lambda: http.get(f"/api/sessions/{key}").json(), lambda d: d.get("score") is not None)
    assert detail["session"]["harness"] == "claude-code" and detail["session"]["status"] == "ended"
    episodes = sorted((m for m in detail["created"] if m["type"] == "episode"), key=lambda m: m["created_at"])
    assert episodes, detail["created"]
    opening_episode = episodes[0]["content"]
    assert opening_episode.startswith("User: How do we deploy the payments service?")
    assert "Assistant: Deploy it with scripts/deploy-payments.sh" in opening_episode
    assert any("bastion-7.internal" in e["content"] and "Assistant: Go through" in e["content"] for e in episodes)

    # no harness text anywhere but the raw transcript kept for the record
    transcript = home.transcripts()[0].read_text()
    assert "api-request-blob" in transcript and "gitStatus" in transcript  # it was there to be misread
    with sqlite3.connect(kd.home / "memories.db") as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        found = {}
        for table in tables:
            if table == "session_transcripts" or table.startswith("sqlite_"):
                continue
            try:
                text = json.dumps(db.execute(f'SELECT * FROM "{table}"').fetchall(), default=str)
            except sqlite3.DatabaseError:
                continue  # an FTS shadow table
            hits = [marker for marker in HARNESS_TEXT if marker in text]
            if hits:
                found[table] = hits
    assert found == {}


def test_daemon_down_hooks_exit_zero_and_uninstall_restores_settings(claude, tmp_path):
    repo = _repo(tmp_path / "proj")
    home = ClaudeHome(tmp_path / "home")
    original = b'{\n    "model": "claude-scripted",\n    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]},\n  "env": {}\n}\n'
    home.settings.write_bytes(original)
    nobody = {"KENNING_HOME": str(tmp_path / "khome"), "KENNING_PORT": str(free_port())}  # no daemon listens
    assert home.connect(nobody).returncode == 0
    assert "post-tool-use-failure" in home.settings.read_text()

    with AnthropicServer() as server:
        server.script(tool("Bash", command="exit 1", description="fail"), "It failed; nothing else to do.")
        code, lines, stderr = run_print(claude, home, repo, server.url, "Run the failing command.")
        asked = len(server.model_requests())
    assert code == 0, stderr
    assert lines[-1].get("subtype") == "success" and lines[-1].get("result") == "It failed; nothing else to do."
    assert asked == 2  # the model was asked as usual: no hook held Claude Code up or broke the turn
    hooks = [line for line in lines if line.get("subtype") == "hook_response"]
    assert hooks and all(h["exit_code"] == 0 and h["outcome"] == "success" for h in hooks), hooks

    removed = home.connect(nobody, "--uninstall")
    assert removed.returncode == 0 and "byte-for-byte" in removed.stdout, removed.stdout
    assert home.settings.read_bytes() == original


def test_the_tested_version_is_the_pinned_one(claude):
    out = subprocess.run([str(claude), "--version"], capture_output=True, text=True, timeout=60).stdout
    assert out.split()[0] == version("claude-code")
