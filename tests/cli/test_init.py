"""`kenning init`: a few lines saying what it set up, which agents this machine has and the one
`kenning connect …` command for each (an agent already running kenning says so instead)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from bench.harnesses.daemon import free_port


def _init(home, kenning_home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KENNING_", "CLAUDE_", "CODEX_", "XDG_", "COPILOT_"))}
    env |= {"HOME": str(home), "KENNING_HOME": str(kenning_home), "KENNING_PORT": str(free_port())}
    return subprocess.run([sys.executable, "-m", "kenning", "init"], env=env, capture_output=True, text=True,
                          timeout=120, cwd=home)


def test_init_names_the_agents_found_and_the_command_for_each(tmp_path):
    home = tmp_path / "user"
    (home / ".claude").mkdir(parents=True)
    (home / ".gemini").mkdir()
    (home / ".config" / "opencode").mkdir(parents=True)
    (home / ".copilot").mkdir()
    done = _init(home, tmp_path / "kenning")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert 4 <= len(lines) <= 20, done.stdout  # one screen at most
    assert f"kenning data: {tmp_path / 'kenning'} (created)" in lines[0]
    assert (tmp_path / "kenning").is_dir()
    text = done.stdout
    assert "Claude Code:  kenning connect claude-code" in text
    assert "Gemini CLI:   kenning connect gemini" in text
    assert "OpenCode:     kenning connect opencode" in text
    assert "Copilot CLI:  kenning connect copilot" in text
    assert "Codex" not in text  # no ~/.codex here
    assert "kenning daemon start" in text  # nothing answers on this port: start it

    again = _init(home, tmp_path / "kenning")
    assert "(already there)" in again.stdout.splitlines()[0]


def test_init_says_when_the_claude_code_plugin_already_runs_kenning(tmp_path):
    home = tmp_path / "user"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"kenning@kenning": True}}))
    done = _init(home, tmp_path / "kenning")
    assert done.returncode == 0, done.stderr
    assert "Claude Code:  connected (plugin kenning@kenning)" in done.stdout, done.stdout
    assert "kenning connect claude-code" not in done.stdout


def test_no_agent_found_points_at_the_mcp_entry(tmp_path):
    home = tmp_path / "user"
    home.mkdir()
    done = _init(home, tmp_path / "kenning")
    assert done.returncode == 0, done.stderr
    assert "no agent found" in done.stdout and "kenning connect mcp" in done.stdout
