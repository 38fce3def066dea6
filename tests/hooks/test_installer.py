"""`kenning connect claude-code|mcp`: merge, idempotency, byte-for-byte uninstall, refusal of bad files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

KENNING = str(Path(sys.executable).with_name("kenning"))

# deliberately odd formatting: tabs, unusual key order, unicode, no trailing newline
ORIGINAL = (
    '{\n\t"model": "opus",\n\t"permissions": {"allow": ["Bash(npm test:*)"], "deny": []},\n'
    '\t"hooks": {\n\t\t"PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", '
    '"command": "prettier --write \\"$FILE\\""}]}],\n'
    '\t\t"Notification": [{"hooks": [{"type": "command", "command": "notify-send héllo"}]}]\n\t},\n'
    '\t"env": {"FOO": "bär"}\n}'
).encode("utf-8")


def connect(*args: str, cwd: Path | None = None, home: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ}
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run([KENNING, "connect", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=60)


def test_install_merges_and_uninstall_round_trips_byte_for_byte(tmp_path):
    path = tmp_path / "settings.json"
    path.write_bytes(ORIGINAL)
    result = connect("claude-code", "--settings", str(path))
    assert result.returncode == 0, result.stderr
    data = json.loads(path.read_text())
    assert data["model"] == "opus" and data["env"] == {"FOO": "bär"}
    assert data["permissions"] == {"allow": ["Bash(npm test:*)"], "deny": []}
    hooks = data["hooks"]
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "PreCompact", "Stop",
                  "SessionEnd"):
        commands = [h["command"] for g in hooks[event] for h in g["hooks"]]
        assert any(" hook " in c and "kenning" in c for c in commands), event
    assert hooks["PostToolUse"][0]["matcher"] == "Write|Edit"  # the user's hook is still first
    assert hooks["Notification"] == [{"hooks": [{"type": "command", "command": "notify-send héllo"}]}]
    assert (tmp_path / "settings.json.kenning-backup").read_bytes() == ORIGINAL

    installed = path.read_bytes()
    again = connect("claude-code", "--settings", str(path))
    assert again.returncode == 0 and "already installed" in again.stdout
    assert path.read_bytes() == installed  # idempotent

    removed = connect("claude-code", "--settings", str(path), "--uninstall")
    assert removed.returncode == 0 and "byte-for-byte" in removed.stdout
    assert path.read_bytes() == ORIGINAL
    assert not (tmp_path / "settings.json.kenning-backup").exists()


def test_uninstall_keeps_later_user_edits(tmp_path):
    path = tmp_path / "settings.json"
    path.write_bytes(ORIGINAL)
    connect("claude-code", "--settings", str(path))
    data = json.loads(path.read_text())
    data["model"] = "sonnet"  # the user changed something after installing
    path.write_text(json.dumps(data, indent=2))
    assert connect("claude-code", "--settings", str(path), "--uninstall").returncode == 0
    after = json.loads(path.read_text())
    original = json.loads(ORIGINAL)
    assert after == {**original, "model": "sonnet"}


def test_project_scope_creates_and_removes_the_file(tmp_path):
    result = connect("claude-code", "--project", cwd=tmp_path)
    path = tmp_path / ".claude" / "settings.json"
    assert result.returncode == 0 and path.exists()
    assert set(json.loads(path.read_text())["hooks"]) == {
        "SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "PreCompact", "Stop", "SessionEnd"}
    assert connect("claude-code", "--project", "--uninstall", cwd=tmp_path).returncode == 0
    assert not path.exists() and not path.parent.exists()  # .claude/ was ours too


def test_user_scope_uses_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    assert connect("claude-code", "--user", home=home).returncode == 0
    assert (home / ".claude" / "settings.json").exists()


def test_invalid_settings_are_refused_untouched(tmp_path):
    path = tmp_path / "settings.json"
    path.write_bytes(b"{ not json,")
    result = connect("claude-code", "--settings", str(path))
    assert result.returncode == 2 and "not valid JSON" in result.stderr
    assert path.read_bytes() == b"{ not json," and not (tmp_path / "settings.json.kenning-backup").exists()
    path.write_bytes(b'{"hooks": []}')
    assert connect("claude-code", "--settings", str(path)).returncode == 2
    assert path.read_bytes() == b'{"hooks": []}'


def test_mcp_config_print_install_uninstall(tmp_path):
    printed = connect("mcp")
    assert printed.returncode == 0
    server = json.loads(printed.stdout)["mcpServers"]["kenning"]
    assert server["args"][-1] == "mcp" and "kenning" in server["command"] + " ".join(server["args"])
    path = tmp_path / ".mcp.json"
    original = b'{"mcpServers": {"other": {"command": "x"}}}'
    path.write_bytes(original)
    assert connect("mcp", "--install", "--path", str(path)).returncode == 0
    assert set(json.loads(path.read_text())["mcpServers"]) == {"other", "kenning"}
    assert connect("mcp", "--uninstall", "--path", str(path)).returncode == 0
    assert path.read_bytes() == original
