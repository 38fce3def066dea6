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
    CommandHook, InstallError, Outcome, _dump, _read, _save_original, _strip_hooks, _write, hook_group, is_ours,
    kenning_command, uninstall_claude_code,
)


@dataclass(frozen=True)
class HookSpec:
    """One harness event we hook: its name in the harness, a matcher, the timeout in seconds."""

    event: str
    timeout_s: int
    matcher: str | None = None


def harness_hook_command(harness: str, event: str, env: dict[str, str] | None = None) -> str:
    """`[env K=V …] kenning hook <harness> <event>`; `env` (KENNING_HOME/PORT…) is passed through
    `env` so the command works whether the harness runs it through a shell or splits it itself."""
    prefix = ["env", *(f"{name}={value}" for name, value in env.items())] if env else []
    return " ".join(shlex.quote(part) for part in [*prefix, *kenning_command(), "hook", harness, event])


def install_hooks(path: Path, harness: str, specs: tuple[HookSpec, ...], env: dict[str, str] | None = None,
                  *, timeout_ms: bool = False, named: bool = False) -> Outcome:
    """Add one command hook per spec (our old entries are replaced). `timeout_ms`: the harness reads
    timeouts in milliseconds (Gemini CLI); `named`: each entry gets a `name` (Gemini CLI shows it)."""
    raw, data = _read(path)
    stripped, already = _strip_hooks(data)
    hooks = stripped.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InstallError(f"{path}: \"hooks\" is not an object; nothing was changed")
    merged_hooks = dict(hooks or {})
    for spec in specs:
        command = harness_hook_command(harness, spec.event, env)
        timeout = spec.timeout_s * 1000 if timeout_ms else spec.timeout_s
        entry: CommandHook = ({"type": "command", "name": f"kenning-{spec.event}", "command": command, "timeout": timeout}
                              if named else {"type": "command", "command": command, "timeout": timeout})
        group = hook_group(spec.matcher, entry)
        existing = merged_hooks.get(spec.event)
        if existing is not None and not isinstance(existing, list):
            raise InstallError(f"{path}: hooks.{spec.event} is not a list; nothing was changed")
        merged_hooks[spec.event] = [*(existing or []), group]
    new = _dump({**stripped, "hooks": merged_hooks})
    if raw is not None and new == raw:
        return Outcome(path, False, f"kenning hooks already installed in {path}")
    _save_original(path, raw, already)
    _write(path, new)
    return Outcome(path, True, f"installed kenning hooks ({', '.join(s.event for s in specs)}) in {path}")


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
