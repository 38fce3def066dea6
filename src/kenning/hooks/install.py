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
from collections.abc import Callable, Mapping, Sequence
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
# our hook commands, in every form kenning has written: the console script (`…/kenning hook …`), `-m kenning.hooks`,
# and the entry script run by its Python (`python -P …/kenning/cli/entry.py hook …`, `hook_argv`)
_OURS = re.compile(r"(?:^|[\s/\\'\"])kenning(?:\.exe)?['\"]?\s+hook\s|-m\s+kenning\.hooks\s"
                   r"|kenning[/\\]cli[/\\]entry\.py['\"]?\s+hook\s")
_CONSOLE_SCRIPT = re.compile(r"(?:^|[\s/\\'\"])kenning(?:\.exe)?['\"]?\s+hook\s")


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


def hook_argv() -> list[str]:
    """argv prefix of an installed hook: this Python running kenning/cli/entry.py itself, `-P` keeping
    the script's folder off sys.path (kenning is imported from where this Python installed it: pip,
    editable or pipx). A hook runs on every prompt and tool step; pip's console script imports `re`
    before kenning, ~6 ms of CPU per hook, about half of what the hook costs over a bare Python start
    (issue 36). `kenning_command()` when entry.py is not a plain file (a zipped install)."""
    script = Path(os.path.abspath(__file__)).parent.parent / "cli" / "entry.py"  # (hooks may not import cli)
    if sys.executable and script.suffix == ".py" and script.is_file():
        return [sys.executable, "-P", str(script)]
    return kenning_command()


def hook_command(event: str, env: dict[str, str] | None = None) -> str:
    """The shell command Claude Code runs for `event`; `env` (KENNING_HOME/PORT…) goes in front."""
    assignments = [f"{name}={shlex.quote(value)}" for name, value in (env or {}).items()]
    return " ".join([*assignments, *(shlex.quote(part) for part in [*hook_argv(), "hook", event])])


def through_console_script(command: str) -> bool:
    """An installed hook command of the older form, `…/kenning hook …` (pip's console script: ~6 ms more
    per hook than `hook_argv`'s); `kenning connect` writes the current form over it."""
    return bool(_CONSOLE_SCRIPT.search(command + " "))


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


# -- hook files: {"hooks": {Event: [item, …]}} ----------------------------------------------------
# What stays of one item of an event's list once our entries are out (None: nothing), and whether it
# held one of ours. Claude Code, Codex and Gemini CLI nest entries in groups (`_group_without_ours`);
# Copilot CLI lists them flat (its connector supplies its own).
ItemStrip = Callable[[object], tuple[object | None, bool]]


def _group_without_ours(group: object) -> tuple[object | None, bool]:
    """A `{"matcher"?, "hooks": [entry, …]}` group without our entries (None when we emptied it)."""
    if not isinstance(group, dict):
        return group, False
    entries = group.get("hooks")
    if not isinstance(entries, list) or not any(is_ours(e) for e in entries):
        return group, False
    rest = [e for e in entries if not is_ours(e)]
    return ({**group, "hooks": rest} if rest else None), True


def strip_hook_entries(data: dict[str, object], without_ours: ItemStrip = _group_without_ours
                       ) -> tuple[dict[str, object], bool]:
    """A copy of `data` without our hook entries (an event we emptied, and `hooks` if we emptied it,
    removed); and whether there were any."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data, False
    found = False
    kept_events: dict[str, object] = {}
    for event, items in hooks.items():
        if not isinstance(items, list):
            kept_events[event] = items
            continue
        kept: list[object] = []
        ours = False
        for item in items:
            rest, held = without_ours(item)
            ours = ours or held
            if rest is not None:
                kept.append(rest)
        found = found or ours
        if kept or not ours:
            kept_events[event] = kept
    result = dict(data)
    if kept_events or not found:
        result["hooks"] = kept_events
    else:
        del result["hooks"]
    return result, found


def install_entries(path: Path, entries: Sequence[tuple[str, object]],
                    without_ours: ItemStrip = _group_without_ours) -> Outcome:
    """Append each (event, item) to the file's `hooks` after taking our old entries out; the file's
    other content and the user's own entries stay as they are."""
    raw, data = _read(path)
    stripped, already = strip_hook_entries(data, without_ours)
    hooks = stripped.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InstallError(f"{path}: \"hooks\" is not an object; nothing was changed")
    merged = dict(hooks or {})
    for event, item in entries:
        existing = merged.get(event)
        if existing is not None and not isinstance(existing, list):
            raise InstallError(f"{path}: hooks.{event} is not a list; nothing was changed")
        merged[event] = [*(existing or []), item]
    new = _dump({**stripped, "hooks": merged})
    if raw is not None and new == raw:
        return Outcome(path, False, f"kenning hooks already installed in {path}")
    _save_original(path, raw, already)
    _write(path, new)
    return Outcome(path, True, f"installed kenning hooks ({', '.join(event for event, _ in entries)}) in {path}")


def uninstall_entries(path: Path, without_ours: ItemStrip = _group_without_ours) -> Outcome:
    """Take our entries out; the original bytes back when nothing else changed since install."""
    raw, data = _read(path)
    if raw is None:
        return Outcome(path, False, f"{path} does not exist; nothing to remove")
    cleaned, found = strip_hook_entries(data, without_ours)
    if not found:
        return Outcome(path, False, f"no kenning hooks in {path}")
    return _finish_uninstall(path, cleaned, raw)


# -- Claude Code settings.json ------------------------------------------------------------------
def install_claude_code(path: Path, env: dict[str, str] | None = None) -> Outcome:
    """Add our hooks; `env` is set in front of each command (a daemon on another home or port)."""
    return install_entries(path, [
        (claude_event, hook_group(matcher, {"type": "command", "command": hook_command(event, env), "timeout": timeout}))
        for claude_event, (event, matcher, timeout) in CLAUDE_EVENTS.items()])


def uninstall_claude_code(path: Path) -> Outcome:
    return uninstall_entries(path)


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
