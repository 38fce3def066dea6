"""`kenning connect` carries the setup: a daemon on another home and port is what the installed
hook (run the way Claude Code runs it, through a shell, without our variables) reaches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

KENNING = str(Path(sys.executable).with_name("kenning"))


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    return {**env, **extra}


def test_hooks_installed_for_a_non_default_port_reach_that_daemon(daemon, tmp_path):
    settings = tmp_path / "settings.json"
    env = clean_env(KENNING_HOME=str(daemon.home), KENNING_PORT=str(daemon.port), HOME=str(tmp_path))
    result = subprocess.run([KENNING, "connect", "claude-code", "--settings", str(settings)], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    hooks = json.loads(settings.read_text())["hooks"]
    command = hooks["SessionStart"][0]["hooks"][0]["command"]
    assert f"KENNING_PORT={daemon.port}" in command and "KENNING_HOME=" in command

    with daemon.client() as http:
        stored = http.post("/api/memory/remember", json={
            "content": "The connector test project deploys with make ship", "project": "connect-env",
            "importance": 0.9, "applies": "project"}).json()  # project-wide: it may open a session (issue 31)
    key = str(uuid.uuid4())
    stdin = json.dumps({"session_id": key, "cwd": str(tmp_path / "connect-env"), "hook_event_name": "SessionStart",
                        "source": "startup", "transcript_path": ""})
    # as Claude Code runs it: a shell, the user's environment (no KENNING_* there)
    ran = subprocess.run(["sh", "-c", command], input=stdin.encode(), capture_output=True,
                         env=clean_env(HOME=str(tmp_path)), timeout=60)
    assert ran.returncode == 0 and ran.stderr == b""
    context = json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]
    assert stored["id"] in context
    with daemon.client() as http:
        assert http.get(f"/api/sessions/{key}").status_code == 200

    mcp = subprocess.run([KENNING, "connect", "mcp"], env=env, capture_output=True, text=True, timeout=60)
    entry = json.loads(mcp.stdout)["mcpServers"]["kenning"]
    assert entry["env"] == {"KENNING_HOME": str(daemon.home.resolve()), "KENNING_PORT": str(daemon.port)}


def test_default_setup_adds_no_variables(tmp_path):
    home = tmp_path / "user"
    settings = tmp_path / "settings.json"
    env = clean_env(HOME=str(home))
    result = subprocess.run([KENNING, "connect", "claude-code", "--settings", str(settings)], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    command = json.loads(settings.read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert "KENNING_" not in command and command.endswith("hook session-start")
    # a non-default port written in the home's config.yaml is found by the hook itself
    (home / ".kenning").mkdir(parents=True)
    (home / ".kenning" / "config.yaml").write_text("port: 4123\n")
    subprocess.run([KENNING, "connect", "claude-code", "--settings", str(settings)], env=env,
                   capture_output=True, text=True, timeout=60, check=True)
    command = json.loads(settings.read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert "KENNING_" not in command
