"""kenning's Claude Code plugin, installed by the real Claude Code CLI (pinned in tests/harness/clis.py)
from this repository's marketplace entry: a headless session then gets a stored memory injected by
the plugin's hooks (the scripted Anthropic server records what reached the model), and the plugin
and `kenning connect claude-code` never both run kenning's hooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from bench.harnesses.anthropic_server import AnthropicServer, claude_env, request_texts
from tests.harness.require import require_cli

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def claude():
    return require_cli("claude-code")


def _env(server_url: str, home: Path, daemon) -> dict[str, str]:
    # the plugin's hooks and MCP server run `kenning` from PATH: this environment's
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return claude_env(server_url, str(home), {"PATH": path, "KENNING_HOME": str(daemon.home),
                                              "KENNING_PORT": str(daemon.port)})


def _run(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{cmd}: {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return done


def test_the_real_claude_code_installs_the_plugin_and_its_hooks_inject_memories(claude, daemon, tmp_path):
    home = tmp_path / "home"
    project = tmp_path / f"plugin-{uuid.uuid4().hex[:8]}"
    project.mkdir(parents=True)
    home.mkdir()
    fact = f"Billing deploys go through helm release {uuid.uuid4().hex[:6]}, never kubectl apply"
    with daemon.client() as client:
        stored = client.post("/api/memory/remember", json={"content": fact, "project": project.name,
                                                           "type": "decision", "importance": 0.9})
        assert stored.status_code == 200, stored.text

    with AnthropicServer() as server:
        env = _env(server.url, home, daemon)
        _run([str(claude), "plugin", "marketplace", "add", str(REPO)], env, project)
        installed = _run([str(claude), "plugin", "install", "kenning@kenning"], env, project)
        assert "kenning@kenning" in installed.stdout, installed.stdout
        settings = json.loads((home / ".claude" / "settings.json").read_text())
        assert settings["enabledPlugins"] == {"kenning@kenning": True}
        assert "hooks" not in settings  # the hooks come from the plugin, not from the settings file

        server.script("Helm it is.")
        _run([str(claude), "-p", "How do we deploy billing?", "--output-format", "json"], env, project)
        sent = "\n".join(request_texts(r) for r in server.model_requests())
        assert fact in sent, sent[-3000:]  # the plugin's SessionStart/UserPromptSubmit hooks injected it

        # `kenning connect claude-code` sees the plugin and adds no second set of hooks
        kenning = Path(sys.executable).with_name("kenning")
        connected = _run([str(kenning), "connect", "claude-code"], env, project)
        assert "plugin (kenning@kenning) is enabled" in connected.stdout, connected.stdout
        assert "hooks" not in json.loads((home / ".claude" / "settings.json").read_text())


def test_a_plugin_hook_stands_down_while_settings_hooks_run(tmp_path, daemon):
    """Installed in the other order (settings hooks first, then the plugin), the plugin's hook exits
    quietly and the settings file's hook answers: one set of hooks fires."""
    home = tmp_path / "home"
    project = tmp_path / f"defer-{uuid.uuid4().hex[:8]}"
    project.mkdir(parents=True)
    with daemon.client() as client:
        stored = client.post("/api/memory/remember", json={"content": "The defer test's deploys use helm charts",
                                                           "project": project.name, "importance": 0.9,
                                                           "applies": "project"})  # opens sessions (issue 31)
        assert stored.status_code == 200, stored.text
    kenning = Path(sys.executable).with_name("kenning")
    env = {**os.environ, "HOME": str(home), "KENNING_HOME": str(daemon.home), "KENNING_PORT": str(daemon.port),
           "CLAUDE_PROJECT_DIR": str(project)}
    env.pop("CLAUDE_CONFIG_DIR", None)
    prompt = json.dumps({"session_id": f"s-{uuid.uuid4().hex[:8]}", "cwd": str(project),
                         "hook_event_name": "SessionStart", "source": "startup"})

    def hook(via_plugin: bool) -> subprocess.CompletedProcess:
        extra = {"KENNING_HOOK_VIA": "plugin"} if via_plugin else {}
        return subprocess.run([str(kenning), "hook", "session-start"], input=prompt, env={**env, **extra},
                              capture_output=True, text=True, timeout=60, cwd=project)

    assert hook(via_plugin=True).stdout.strip()  # alone, the plugin's hook answers
    _run([str(kenning), "connect", "claude-code", "--project"], env, project)
    # the installed hook: this install's Python running kenning/cli/entry.py (issue 36: not pip's console script)
    assert "cli/entry.py hook session-start" in (project / ".claude" / "settings.json").read_text()
    deferred = hook(via_plugin=True)
    assert deferred.returncode == 0 and deferred.stdout == "", deferred.stdout
    assert hook(via_plugin=False).stdout.strip()  # the settings file's hook still answers
