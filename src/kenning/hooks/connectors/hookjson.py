"""Install kenning's command hooks into a Claude-Code-shaped hook file (Codex's hooks.json,
Gemini CLI's settings.json): `{"hooks": {Event: [{"matcher"?, "hooks": [{"type": "command", …}]}]}}`.

Same guarantees as `kenning.hooks.install` (whose helpers this reuses): only our entries are
added or removed, the original bytes are kept next to the file, install twice changes nothing,
uninstall restores the original byte for byte when nothing else changed since.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from kenning.hooks.install import (
    CommandHook, InstallError, Outcome, _read, hook_argv, hook_group, install_entries, is_ours,
    uninstall_claude_code,
)


@dataclass(frozen=True)
class HookSpec:
    """One harness event we hook: its name in the harness, a matcher, the timeout in seconds."""

    event: str
    timeout_s: int
    matcher: str | None = None


def harness_hook_command(harness: str, event: str, env: dict[str, str] | None = None) -> str:
    """`[env K=V …] <python> -P …/kenning/cli/entry.py hook <harness> <event>` (install.hook_argv); `env` (KENNING_HOME/PORT…) is passed through
    `env` so the command works whether the harness runs it through a shell or splits it itself."""
    prefix = ["env", *(f"{name}={value}" for name, value in env.items())] if env else []
    return " ".join(shlex.quote(part) for part in [*prefix, *hook_argv(), "hook", harness, event])


def install_hooks(path: Path, harness: str, specs: tuple[HookSpec, ...], env: dict[str, str] | None = None,
                  *, timeout_ms: bool = False, named: bool = False) -> Outcome:
    """Add one command hook per spec (our old entries are replaced). `timeout_ms`: the harness reads
    timeouts in milliseconds (Gemini CLI); `named`: each entry gets a `name` (Gemini CLI shows it)."""
    entries: list[tuple[str, object]] = []
    for spec in specs:
        command = harness_hook_command(harness, spec.event, env)
        timeout = spec.timeout_s * 1000 if timeout_ms else spec.timeout_s
        entry: CommandHook = ({"type": "command", "name": f"kenning-{spec.event}", "command": command, "timeout": timeout}
                              if named else {"type": "command", "command": command, "timeout": timeout})
        entries.append((spec.event, hook_group(spec.matcher, entry)))
    return install_entries(path, entries)


uninstall_hooks = uninstall_claude_code  # the same file shape: our entries out, the original bytes back


def installed_commands(path: Path) -> dict[str, list[str]]:
    """{event: [our hook commands]} as the file holds them now ({} when none or unreadable)."""
    try:
        _, data = _read(path)
    except (InstallError, OSError):
        return {}
    given = data.get("hooks")
    hooks = given if isinstance(given, dict) else {}
    found: dict[str, list[str]] = {}
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            for entry in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if is_ours(entry):
                    found.setdefault(event, []).append(entry["command"])
    return found
