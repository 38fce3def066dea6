"""The Claude Code plugin's files agree with kenning: the marketplace entry points at the plugin, its
hooks are the ones `kenning connect claude-code` installs (events, matchers, timeouts), each run as
a plugin hook, and its MCP server is `kenning mcp`. (tests/harness/test_claude_plugin.py installs it
with the real Claude Code CLI.)"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from kenning.hooks.install import CLAUDE_EVENTS
from kenning.hooks.plugin import NOT_ON_PATH, NOT_ON_PATH_START, PLUGIN_NAME, VIA_ENV, plugin_hooks

REPO = Path(__file__).resolve().parents[2]


def test_the_plugin_declares_kennings_hooks_and_mcp_server():
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    (entry,) = market["plugins"]
    plugin_dir = (REPO / entry["source"]).resolve()
    manifest = json.loads((plugin_dir / ".claude-plugin" / "plugin.json").read_text())
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert entry["name"] == manifest["name"] == PLUGIN_NAME and market["name"]
    assert entry["version"] == manifest["version"] == version

    written = json.loads((plugin_dir / "hooks" / "hooks.json").read_text())
    assert written == plugin_hooks(), "regenerate it: python -m kenning.hooks.plugin plugin/hooks/hooks.json"
    hooks = written["hooks"]
    assert set(hooks) == set(CLAUDE_EVENTS)
    for claude_event, (event, matcher, timeout) in CLAUDE_EVENTS.items():
        (group,) = hooks[claude_event]
        assert group.get("matcher") == matcher
        (hook,) = group["hooks"]
        guard = NOT_ON_PATH_START if claude_event == "SessionStart" else NOT_ON_PATH
        assert hook == {"type": "command", "command": f"{guard} {VIA_ENV}=plugin kenning hook {event}",
                        "timeout": timeout}

    servers = json.loads((plugin_dir / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"kenning": {"type": "stdio", "command": "kenning", "args": ["mcp"]}}


def test_without_kenning_on_path_the_session_start_tells_the_user_and_the_rest_stand_down(tmp_path):
    """The plugin's commands as Claude Code runs them (a shell), on a PATH with no `kenning` (issue 35)."""
    import subprocess

    hooks = plugin_hooks()["hooks"]
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for claude_event, groups in hooks.items():
        command = groups[0]["hooks"][0]["command"]
        done = subprocess.run(["sh", "-c", command], env=bare, input="{}", capture_output=True, text=True, timeout=30)
        assert done.returncode == 0 and not done.stderr, (claude_event, done.stderr)
        if claude_event == "SessionStart":
            assert "not on PATH" in json.loads(done.stdout)["systemMessage"]
        else:
            assert done.stdout == ""
