"""Install / uninstall kenning's entries in JSON config files (Claude Code settings, .mcp.json).

Non-destructive by construction: the file is parsed, only our entries are added or removed,
everything else keeps its keys, order and values. Before the first change the original bytes
are saved next to the file (`<name>.kenning-backup`, or a `<name>.kenning-created` marker when
there was no file); uninstall restores those exact bytes when nothing else changed since,
so install → uninstall round-trips byte-for-byte. Installing twice changes nothing.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NotRequired, TypedDict

from kenning.hooks.adapters.claude_code import EVENTS

# A config file kenning edits is the user's: read as a JSON object (`dict[str, object]`) whose
# every value is checked with isinstance before use; kenning's own entries are typed below.

CLAUDE_EVENTS: dict[str, tuple[str, str | None, int]] = {
    # Claude Code event → (kenning hook event, matcher, timeout seconds)
    "SessionStart": ("session-start", None, 10),
    "UserPromptSubmit": ("user-prompt-submit", None, 10),
    "PostToolUse": ("post-tool-use", "*", 5),
    "PostToolUseFailure": ("post-tool-use-failure", "*", 5),  # a failed tool (PostToolUse fires for successes only)
    "PreCompact": ("pre-compact", None, 10),
    "Stop": ("stop", None, 5),
    "SessionEnd": ("session-end", None, 30),
}
assert all(event in EVENTS for event, _, _ in CLAUDE_EVENTS.values())
_OURS = re.compile(r"(?:^|[\s/\\'\"])kenning(?:\.exe)?['\"]?\s+hook\s|-m\s+kenning\.hooks\s")


class CommandHook(TypedDict):
    """One hook entry kenning writes into a Claude-Code-shaped hook file (key order as written)."""

    type: str  # "command"
    name: NotRequired[str]  # Gemini CLI shows it
    command: str
    timeout: int  # seconds (milliseconds for Gemini CLI)


class HookGroup(TypedDict):
    """`{"matcher"?, "hooks": [...]}`: the entries of one event."""

    matcher: NotRequired[str]
    hooks: list[CommandHook]


class McpServer(TypedDict):
    """kenning's entry under `mcpServers` (.mcp.json, Cursor's mcp.json, Claude Desktop's config)."""

    command: str
    args: list[str]
    env: NotRequired[dict[str, str]]


class McpConfig(TypedDict):
    mcpServers: dict[str, McpServer]


def hook_group(matcher: str | None, entry: CommandHook) -> HookGroup:
    """One event's group holding `entry` (`matcher` first when there is one, as written before)."""
    return {"matcher": matcher, "hooks": [entry]} if matcher is not None else {"hooks": [entry]}


class InstallError(Exception):
    """The target file cannot be changed safely (not JSON, not an object, …)."""


@dataclass
class Outcome:
    path: Path
    changed: bool
    message: str


def kenning_command() -> list[str]:
    """argv prefix that runs kenning: the `kenning` script next to this Python, else `python -m`."""
    script = Path(sys.executable).with_name("kenning")
    if script.exists():
        return [str(script)]
    found = shutil.which("kenning")
    return [found] if found else [sys.executable, "-m", "kenning"]


def hook_command(event: str, env: dict[str, str] | None = None) -> str:
    """The shell command Claude Code runs for `event`; `env` (KENNING_HOME/PORT…) goes in front."""
    assignments = [f"{name}={shlex.quote(value)}" for name, value in (env or {}).items()]
    return " ".join([*assignments, *(shlex.quote(part) for part in [*kenning_command(), "hook", event])])


def is_ours(entry: object) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("command"), str) and bool(_OURS.search(entry["command"] + " "))


def _backup_paths(path: Path) -> tuple[Path, Path]:
    return path.with_name(path.name + ".kenning-backup"), path.with_name(path.name + ".kenning-created")


def _read(path: Path) -> tuple[bytes | None, dict[str, object]]:
    if not path.exists():
        return None, {}
    raw = path.read_bytes()
    if not raw.strip():
        return raw, {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); fix it first, nothing was changed") from exc
    if not isinstance(data, dict):
        raise InstallError(f"{path} must hold a JSON object; nothing was changed")
    return raw, data


def _dump(data: Mapping[str, object]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _write(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".kenning-tmp")
    tmp.write_bytes(content)
    os.replace(tmp, path)


def _save_original(path: Path, raw: bytes | None, already_ours: bool) -> None:
    backup, created = _backup_paths(path)
    if already_ours or backup.exists() or created.exists():
        return
    if raw is None:
        made_dir = not path.parent.exists()
        path.parent.mkdir(parents=True, exist_ok=True)
        created.write_bytes(b"dir" if made_dir else b"")
    else:
        backup.write_bytes(raw)


def _comparable(data: object) -> object:
    """For "did anything else change?": empty hook containers count as absent."""
    if not isinstance(data, dict):
        return data
    result = dict(data)
    hooks = result.get("hooks")
    if isinstance(hooks, dict):
        hooks = {k: v for k, v in hooks.items() if v != []}
        if hooks:
            result["hooks"] = hooks
        else:
            del result["hooks"]
    if result.get("mcpServers") == {}:
        del result["mcpServers"]
    return result


def _finish_uninstall(path: Path, cleaned: dict[str, object], raw: bytes) -> Outcome:
    backup, created = _backup_paths(path)
    if backup.exists():
        original = backup.read_bytes()
        try:
            same = _comparable(json.loads(original.decode("utf-8") or "{}")) == _comparable(cleaned)
        except ValueError:
            same = False
        if same:
            _write(path, original)
            backup.unlink()
            return Outcome(path, True, f"removed kenning from {path}; original restored byte-for-byte")
    if created.exists() and _comparable(cleaned) == {}:
        made_dir = created.read_bytes() == b"dir"
        path.unlink()
        created.unlink()
        if made_dir and not any(path.parent.iterdir()):
            path.parent.rmdir()
        return Outcome(path, True, f"removed {path} (kenning had created it)")
    new = _dump(cleaned)
    if new == raw:
        return Outcome(path, False, f"no kenning entries in {path}")
    _write(path, new)
    note = f"; the pre-install copy stays at {backup}" if backup.exists() else ""
    return Outcome(path, True, f"removed kenning from {path} (other edits kept){note}")


# -- Claude Code settings.json ------------------------------------------------------------------
def _strip_hooks(data: dict[str, object]) -> tuple[dict[str, object], bool]:
    """A copy of `data` without our hook entries (containers we emptied are removed)."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data, False
    found = False
    new_hooks: dict[str, object] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            new_hooks[event] = groups
            continue
        kept_groups = []
        for group in groups:
            entries = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(entries, list) or not any(is_ours(e) for e in entries):
                kept_groups.append(group)
                continue
            found = True
            rest = [e for e in entries if not is_ours(e)]
            if rest:
                kept_groups.append({**group, "hooks": rest})
        if kept_groups or not groups:
            new_hooks[event] = kept_groups
        elif len(kept_groups) != len(groups):
            continue  # we emptied this event
        else:
            new_hooks[event] = kept_groups
    result = dict(data)
    if new_hooks or not found:
        result["hooks"] = new_hooks
    else:
        del result["hooks"]
    return result, found


def install_claude_code(path: Path, env: dict[str, str] | None = None) -> Outcome:
    """Add our hooks; `env` is set in front of each command (a daemon on another home or port)."""
    raw, data = _read(path)
    stripped, already = _strip_hooks(data)
    hooks = stripped.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InstallError(f"{path}: \"hooks\" is not an object; nothing was changed")
    merged = dict(stripped)
    merged_hooks = dict(hooks or {})
    for claude_event, (event, matcher, timeout) in CLAUDE_EVENTS.items():
        group = hook_group(matcher, {"type": "command", "command": hook_command(event, env), "timeout": timeout})
        existing = merged_hooks.get(claude_event)
        if existing is not None and not isinstance(existing, list):
            raise InstallError(f"{path}: hooks.{claude_event} is not a list; nothing was changed")
        merged_hooks[claude_event] = [*(existing or []), group]
    merged["hooks"] = merged_hooks
    new = _dump(merged)
    if raw is not None and new == raw:
        return Outcome(path, False, f"kenning hooks already installed in {path}")
    _save_original(path, raw, already)
    _write(path, new)
    return Outcome(path, True, f"installed kenning hooks ({', '.join(CLAUDE_EVENTS)}) in {path}")


def uninstall_claude_code(path: Path) -> Outcome:
    raw, data = _read(path)
    if raw is None:
        return Outcome(path, False, f"{path} does not exist; nothing to remove")
    cleaned, found = _strip_hooks(data)
    if not found:
        return Outcome(path, False, f"no kenning hooks in {path}")
    return _finish_uninstall(path, cleaned, raw)


# -- MCP client config (.mcp.json / claude_desktop_config.json) ----------------------------------
def mcp_server_entry(env: dict[str, str] | None = None) -> McpServer:
    argv = kenning_command()
    entry: McpServer = {"command": argv[0], "args": [*argv[1:], "mcp"]}
    if env:
        entry["env"] = dict(env)
    return entry


def mcp_config(env: dict[str, str] | None = None) -> McpConfig:
    return {"mcpServers": {"kenning": mcp_server_entry(env)}}


def install_mcp(path: Path, env: dict[str, str] | None = None) -> Outcome:
    raw, data = _read(path)
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise InstallError(f"{path}: \"mcpServers\" is not an object; nothing was changed")
    merged = {**data, "mcpServers": {**servers, "kenning": mcp_server_entry(env)}}
    new = _dump(merged)
    if raw is not None and new == raw:
        return Outcome(path, False, f"kenning MCP server already configured in {path}")
    _save_original(path, raw, "kenning" in servers)
    _write(path, new)
    return Outcome(path, True, f"added the kenning MCP server to {path}")


def uninstall_mcp(path: Path) -> Outcome:
    raw, data = _read(path)
    servers = data.get("mcpServers")
    if raw is None or not isinstance(servers, dict) or "kenning" not in servers:
        return Outcome(path, False, f"no kenning MCP server in {path}")
    rest = {k: v for k, v in servers.items() if k != "kenning"}
    cleaned = dict(data)
    if rest:
        cleaned["mcpServers"] = rest
    else:
        del cleaned["mcpServers"]
    return _finish_uninstall(path, cleaned, raw)
