"""`kenning connect copilot`: GitHub Copilot CLI hooks in the user's `~/.copilot/settings.json`
(`$COPILOT_HOME/settings.json` when set).

Copilot CLI 1.0.102 runs user-level hooks without a trust step. In settings.json `hooks` is keyed by
event, each a list of entries `{"type": "command", "bash": "…", "timeoutSec": N}` (the schema of a
repository's `.github/hooks/*.json`, which kenning never touches: those belong to the repository
and run only in a trusted folder). There is no project scope here.

The guarantees of `kenning.hooks.install` hold (its `install_entries` / `uninstall_entries` do the
work, given this file's flat entries): only our entries are added or removed, the original bytes are
kept next to the file, install twice changes nothing, uninstall restores the original byte for byte
when nothing else changed since.
"""

from __future__ import annotations

import os
from pathlib import Path

from kenning.hooks.connectors.hookjson import harness_hook_command
from kenning.hooks.install import InstallError, _read, install_entries, uninstall_entries
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


def _without_ours(entry: object) -> tuple[object | None, bool]:
    """Copilot CLI lists entries flat under each event (no groups): ours goes whole."""
    return (None, True) if is_ours(entry) else (entry, False)


def install(env: dict[str, str] | None, environ: dict[str, str] | None = None) -> list[str]:
    entries: list[tuple[str, object]] = [
        (event, {"type": "command", "bash": harness_hook_command(HARNESS, event, env), "timeoutSec": timeout})
        for event, timeout in EVENTS.items()]
    return [install_entries(settings_path(environ), entries, _without_ours).message]


def uninstall(environ: dict[str, str] | None = None) -> list[str]:
    return [uninstall_entries(settings_path(environ), _without_ours).message]


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
