"""An area rule reaches the agent when its area comes up (issue 31), through the real Claude Code CLI.

A rule about `normalize_host` is linked to netkit/hosts.py by the code index: it does not open the session
(session start shows project-scope rules only), and when the agent Reads hosts.py (a scripted tool call),
the PostToolUse step answer carries it into the model's next request. Real `claude` (pinned,
tests/harness/clis.py) headless against a scripted local Anthropic server, hooks installed by
`kenning connect claude-code`, a real daemon.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.harnesses.daemon import start_daemon
from bench.harnesses.anthropic_server import AnthropicServer, tool
from bench.harnesses.claude_runner import ClaudeHome, Session
from tests.harness.require import require_cli

RULE = "`normalize_host` must strip the single trailing dot before matching: host.example.com. is host.example.com"
PROJECT_RULE = "Never push to main; every change goes through a pull request"


@pytest.fixture(scope="module")
def claude() -> Path:
    return require_cli("claude-code")


@pytest.fixture(scope="module")
def kd(tmp_path_factory):
    proc = start_daemon(tmp_path_factory.mktemp("claude-area-daemon"))
    yield proc
    proc.stop()


def _repo(path: Path) -> Path:
    (path / "netkit").mkdir(parents=True)
    (path / "netkit" / "hosts.py").write_text("def normalize_host(name):\n    return name.lower()\n")
    (path / "netkit" / "ports.py").write_text("def split_port(host):\n    return host.rsplit(':', 1)\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    subprocess.run([*git, "add", "."], cwd=path, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=path, check=True)
    return path


def test_an_area_rule_waits_for_its_file_and_reaches_the_model_after_the_read(claude, kd, tmp_path):
    repo = _repo(tmp_path / "netkit")
    project = repo.name  # what the hooks call this project (the git root's name)
    with kd.client(timeout=120) as http:
        assert http.post("/api/code/index", json={"path": str(repo), "project": project}).status_code == 200
        rule = http.post("/api/memory/remember", json={"content": RULE, "type": "constraint", "project": project,
                                                        "created_at": "2026-01-01T00:00:00Z"}).json()
        standing = http.post("/api/memory/remember", json={"content": PROJECT_RULE, "type": "constraint",
                                                            "project": project, "created_at": "2026-01-01T00:00:00Z"}).json()
        stored = http.get(f"/api/memory/{rule['id']}").json()
    assert (stored["applies"], stored["area"]) == ("area", "normalize_host")
    assert "netkit/hosts.py" in stored["related_files"]

    home = ClaudeHome(tmp_path / "home")
    connected = home.connect({"KENNING_HOME": str(kd.home), "KENNING_PORT": str(kd.port)})
    assert connected.returncode == 0, connected.stderr
    with AnthropicServer() as server, Session(claude, home, repo, server.url) as session:
        server.script(tool("Read", file_path=str(repo / "netkit" / "hosts.py")), "normalize_host lower-cases names.")
        got = session.turn("Summarise the netkit package for me in one line.")
        assert got[-1].get("subtype") == "success", got[-1]
        assert session.close() == 0, session.stderr
        first, after_read = (r.text() for r in server.model_requests()[:2])
    assert f"[{standing['id']}]" in first or standing["id"] in first  # a project rule opens the session
    assert rule["id"] not in first  # neither session start nor this prompt (it does not ask about hosts) shows it
    assert rule["id"] in after_read and "trailing dot" in after_read  # the step that read hosts.py carried it
