"""kenning's Claude Code plugin (`plugin/` in the repository, listed by `.claude-plugin/marketplace.json`)
and the hooks `kenning connect claude-code` writes into a settings file: never both at once.

`kenning connect claude-code` asks `enabled_plugin()` first and installs nothing while the plugin is
enabled. The plugin's hook commands run with `KENNING_HOOK_VIA=plugin`; such a hook stands down
(`plugin_defers()`) when a settings file Claude Code reads already runs kenning's hooks, so an
install made in the other order does not fire twice either.

`plugin/hooks/hooks.json` is `plugin_hooks()` written out (`python -m kenning.hooks.plugin PATH`): the
same events, matchers and timeouts as `kenning connect claude-code` (tests/install checks they agree).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # a plugin hook imports this module: the installer (typing, dataclasses, shutil) loads only to write
    from typing import TypedDict

    from kenning.hooks.install import HookGroup

    class PluginHooks(TypedDict):
        """The plugin's hooks/hooks.json."""

        description: str
        hooks: dict[str, list[HookGroup]]  # Claude Code event → its groups

PLUGIN_NAME = "kenning"
VIA_ENV = "KENNING_HOOK_VIA"


def claude_dir() -> Path:
    """Claude Code's user folder (`CLAUDE_CONFIG_DIR`, else ~/.claude)."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude").expanduser()


def _settings_files(project_dir: Path | None) -> list[Path]:
    files = [claude_dir() / "settings.json"]
    if project_dir is not None:
        files += [project_dir / ".claude" / "settings.json", project_dir / ".claude" / "settings.local.json"]
    return files


def _load(path: Path) -> dict[str, object]:  # a settings file: the user's JSON, read with isinstance
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def enabled_plugin(project_dir: Path | None = None) -> str | None:
    """The id (`kenning@<marketplace>`) of kenning's plugin where a settings file enables it, else None."""
    for path in _settings_files(project_dir):
        enabled = _load(path).get("enabledPlugins")
        if isinstance(enabled, dict):
            for plugin_id, on in enabled.items():
                if on is True and isinstance(plugin_id, str) and plugin_id.split("@", 1)[0] == PLUGIN_NAME:
                    return plugin_id
    return None


def settings_with_hooks(project_dir: Path | None = None) -> Path | None:
    """The first settings file that runs kenning's hooks itself (`kenning connect claude-code`)."""
    for path in _settings_files(project_dir):
        hooks = _load(path).get("hooks")
        if not isinstance(hooks, dict):
            continue
        from kenning.hooks.install import is_ours  # only when a settings file has hooks to look at

        for groups in hooks.values():
            for group in groups if isinstance(groups, list) else []:
                entries = group.get("hooks") if isinstance(group, dict) else None
                if isinstance(entries, list) and any(is_ours(entry) for entry in entries):
                    return path
    return None


def plugin_defers(environ: dict[str, str] | None = None) -> bool:
    """True for a hook the plugin runs while a settings file runs kenning's hooks too: it stands down."""
    env = os.environ if environ is None else environ
    if env.get(VIA_ENV) != "plugin":
        return False
    project = env.get("CLAUDE_PROJECT_DIR")
    return settings_with_hooks(Path(project) if project else Path.cwd()) is not None


# The plugin's hooks run `kenning` from PATH. Without it, every hook would fail with a shell error line;
# instead the other hooks stand down and the session start tells the user, as a `systemMessage` (issue 35).
NOT_ON_PATH_MESSAGE = ("kenning: the Claude Code plugin is installed but the kenning command is not on PATH, "
                       "so this session has no memories. Install it (uv tool install, pipx install) or add it to PATH.")
NOT_ON_PATH = "command -v kenning >/dev/null 2>&1 || exit 0;"
NOT_ON_PATH_START = ("command -v kenning >/dev/null 2>&1 || { echo '"
                     + json.dumps({"systemMessage": NOT_ON_PATH_MESSAGE}) + "'; exit 0; };")


def plugin_hooks() -> PluginHooks:
    """The plugin's hooks/hooks.json: every hook `kenning connect claude-code` installs, run as a plugin hook."""
    from kenning.hooks.install import CLAUDE_EVENTS, hook_group

    hooks: dict[str, list[HookGroup]] = {}
    for claude_event, (event, matcher, timeout) in CLAUDE_EVENTS.items():
        command = f"{NOT_ON_PATH_START if claude_event == 'SessionStart' else NOT_ON_PATH} {VIA_ENV}=plugin kenning hook {event}"
        hooks[claude_event] = [hook_group(matcher, {"type": "command", "command": command, "timeout": timeout})]
    return {"description": "kenning: memories in at session start, prompt and tool step; the session recorded at the end",
            "hooks": hooks}


if __name__ == "__main__":
    import sys

    Path(sys.argv[1]).write_text(json.dumps(plugin_hooks(), indent=2, ensure_ascii=False) + "\n")
