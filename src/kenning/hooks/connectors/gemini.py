"""`kenning connect gemini`: Gemini CLI hooks in `~/.gemini/settings.json` (or a project's
`.gemini/settings.json`). Gemini CLI reads hook timeouts in **milliseconds**."""

from __future__ import annotations

from pathlib import Path

from kenning.hooks.connectors.hookjson import HookSpec, install_hooks, uninstall_hooks

HARNESS = "gemini"
SPECS = (
    HookSpec("SessionStart", 10),
    HookSpec("BeforeAgent", 10),  # the user's prompt
    HookSpec("AfterTool", 5),
    HookSpec("AfterAgent", 5),  # the turn's answer (memory feedback)
    HookSpec("PreCompress", 30),
    HookSpec("SessionEnd", 30),
)


def settings_path(project: Path | None) -> Path:
    return (project if project is not None else Path.home()) / ".gemini" / "settings.json"


def install(project: Path | None, env: dict[str, str] | None) -> list[str]:
    return [install_hooks(settings_path(project), HARNESS, SPECS, env, timeout_ms=True, named=True).message]


def uninstall(project: Path | None) -> list[str]:
    return [uninstall_hooks(settings_path(project)).message]
