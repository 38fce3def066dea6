"""`kenning connect copilot`: GitHub Copilot CLI hooks in the user's `~/.copilot/settings.json`
(`$COPILOT_HOME/settings.json` when set).

Copilot CLI 1.0.102 runs user-level hooks without a trust step. In settings.json `hooks` is keyed by
event, each a list of entries `{"type": "command", "bash": "…", "timeoutSec": N}` (the schema of a
repository's `.github/hooks/*.json`, which kenning never touches: those belong to the repository
and run only in a trusted folder). There is no project scope here.

The guarantees of `kenning.hooks.install` hold (its helpers are reused): only our entries are added
or removed, the original bytes are kept next to the file, install twice changes nothing, uninstall
restores the original byte for byte when nothing else changed since.
"""

from __future__ import annotations

import os
from pathlib import Path

from kenning.hooks.connectors.hookjson import harness_hook_command
from kenning.hooks.install import InstallError, Outcome, _dump, _finish_uninstall, _read, _save_original, _write
from kenning.hooks.install import is_ours as _command_is_ours

HARNESS = "copilot"
EVENTS: dict[str, int] = {  # Copilot CLI event → timeout seconds
    "sessionStart": 10,
    "userPromptSubmitted": 10,
    "postToolUse": 5,
    "postToolUseFailure": 5,  # a failed tool (postToolUse fires for the others)
    "errorOccurred": 5,
    "agentStop": 5,  # each turn's end: memory feedback
    "preCompact": 10,
    "sessionEnd": 30,
}


def copilot_home(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env["COPILOT_HOME"]) if env.get("COPILOT_HOME") else Path(env.get("HOME") or Path.home()) / ".copilot"


def settings_path(environ: dict[str, str] | None = None) -> Path:
    return copilot_home(environ) / "settings.json"


def is_ours(entry: object) -> bool:
    """A hook entry whose `bash` command runs `kenning hook …`."""
    return isinstance(entry, dict) and _command_is_ours({"command": entry.get("bash")})


def _strip(data: dict[str, object]) -> tuple[dict[str, object], bool]:
    """A copy of `data` without our entries (an event we emptied, and `hooks` if we emptied it, removed)."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data, False
    found = False
    kept: dict[str, object] = {}
    for event, entries in hooks.items():
        if not isinstance(entries, list) or not any(is_ours(e) for e in entries):
            kept[event] = entries
            continue
        found = True
        rest = [e for e in entries if not is_ours(e)]
        if rest:
            kept[event] = rest
    result = dict(data)
    if kept or not found:
        result["hooks"] = kept
    else:
        del result["hooks"]
    return result, found


def install(env: dict[str, str] | None, environ: dict[str, str] | None = None) -> list[str]:
    path = settings_path(environ)
    raw, data = _read(path)
    stripped, already = _strip(data)
    hooks = stripped.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InstallError(f"{path}: \"hooks\" is not an object; nothing was changed")
    merged = dict(hooks or {})
    for event, timeout in EVENTS.items():
        existing = merged.get(event)
        if existing is not None and not isinstance(existing, list):
            raise InstallError(f"{path}: hooks.{event} is not a list; nothing was changed")
        entry = {"type": "command", "bash": harness_hook_command(HARNESS, event, env), "timeoutSec": timeout}
        merged[event] = [*(existing or []), entry]
    new = _dump({**stripped, "hooks": merged})
    if raw is not None and new == raw:
        return [f"kenning hooks already installed in {path}"]
    _save_original(path, raw, already)
    _write(path, new)
    return [f"installed kenning hooks ({', '.join(EVENTS)}) in {path}"]


def uninstall(environ: dict[str, str] | None = None) -> list[str]:
    path = settings_path(environ)
    raw, data = _read(path)
    if raw is None:
        return [Outcome(path, False, f"{path} does not exist; nothing to remove").message]
    cleaned, found = _strip(data)
    if not found:
        return [f"no kenning hooks in {path}"]
    return [_finish_uninstall(path, cleaned, raw).message]


def installed_commands(environ: dict[str, str] | None = None) -> dict[str, list[str]]:
    """{event: [our hook commands]} as settings.json holds them now ({} when none or unreadable)."""
    try:
        _, data = _read(settings_path(environ))
    except (InstallError, OSError):
        return {}
    given = data.get("hooks")
    hooks = given if isinstance(given, dict) else {}
    return {event: [str(e["bash"]) for e in entries if is_ours(e)]
            for event, entries in hooks.items() if isinstance(entries, list) and any(is_ours(e) for e in entries)}
