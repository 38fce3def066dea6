"""`kenning connect opencode`: a dependency-free JS plugin in OpenCode's plugins folder
(`~/.config/opencode/plugins/kenning.js`, or a project's `.opencode/plugins/kenning.js`).

OpenCode has no hook JSON: the plugin (`opencode_plugin.js`, the kenning command and the
KENNING_* variables written into it) runs `kenning hook opencode <event>` per event.

OpenCode installs `@opencode-ai/plugin` into each config folder at start (64 MB from the npm
registry; offline it stalls about 70 s) unless the folder already has `node_modules` and a
`package-lock.json` whose root lists every dependency (`Npm.install` in OpenCode 1.18: it
checks exactly that). Our plugin imports nothing, so when the folder has neither we add an
empty `node_modules` and a lock listing `@opencode-ai/plugin` (the `.gitignore` OpenCode
writes there already ignores both); uninstall removes them again if they are still ours.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path

from kenning.hooks.connectors.files import remove_owned, write_owned
from kenning.hooks.install import Outcome, hook_argv

HARNESS = "opencode"
PLUGIN_NAME = "kenning.js"
MARKER = "// kenning's OpenCode plugin"
LOCK_MARKER = "kenning"  # the lock's "name": ours to remove
STUB_LOCK = {"name": LOCK_MARKER, "lockfileVersion": 3, "requires": True,
             "packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}}


def config_dir(project: Path | None, environ: dict[str, str] | None = None) -> Path:
    """OpenCode's config folder: a project's `.opencode`, else `$XDG_CONFIG_HOME/opencode`."""
    if project is not None:
        return project / ".opencode"
    env = os.environ if environ is None else environ
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "opencode"


def plugin_path(project: Path | None, environ: dict[str, str] | None = None) -> Path:
    return config_dir(project, environ) / "plugins" / PLUGIN_NAME


def plugin_source(env: dict[str, str] | None = None) -> str:
    template = resources.files("kenning.hooks.connectors").joinpath("opencode_plugin.js").read_text(encoding="utf-8")
    return (template.replace("__KENNING_ARGV__", json.dumps(hook_argv()))
            .replace("__KENNING_ENV__", json.dumps(dict(env or {}), sort_keys=True)))


def _is_ours(path: Path) -> bool:
    try:
        return path.read_text(encoding="utf-8").startswith(MARKER)
    except (OSError, UnicodeDecodeError):
        return False


def install(project: Path | None, env: dict[str, str] | None, environ: dict[str, str] | None = None) -> list[str]:
    path = plugin_path(project, environ)
    source = plugin_source(env)
    if path.exists() and not _is_ours(path):
        return [f"{path} exists and is not kenning's plugin; nothing was changed"]
    messages = []
    if path.exists() and path.read_text(encoding="utf-8") == source:
        messages.append(f"kenning plugin already installed at {path}")
    else:
        write_owned(path, source)
        messages.append(f"installed the kenning plugin at {path}")
    messages += _hold_dependency_install(path.parent.parent)
    return messages


def _hold_dependency_install(folder: Path) -> list[str]:
    modules, lock, package = folder / "node_modules", folder / "package-lock.json", folder / "package.json"
    if modules.exists() or lock.exists() or package.exists():
        return []  # the user's own packages: OpenCode's install is theirs to manage
    modules.mkdir()
    (modules / ".kenning").write_text("created by kenning connect opencode\n", encoding="utf-8")
    lock.write_text(json.dumps(STUB_LOCK, indent=2) + "\n", encoding="utf-8")
    return [f"{folder}: no package install at OpenCode's start (the plugin imports nothing)"]


def _release_dependency_install(folder: Path) -> None:
    modules, lock = folder / "node_modules", folder / "package-lock.json"
    try:
        if lock.exists() and json.loads(lock.read_text(encoding="utf-8")) == STUB_LOCK:
            lock.unlink()
        if (modules / ".kenning").exists() and [p.name for p in modules.iterdir()] == [".kenning"]:
            (modules / ".kenning").unlink()
            modules.rmdir()
    except (OSError, ValueError):
        pass


def uninstall(project: Path | None, environ: dict[str, str] | None = None) -> list[str]:
    path = plugin_path(project, environ)
    if not path.exists():
        return [Outcome(path, False, f"no kenning plugin at {path}").message]
    if not _is_ours(path):
        return [f"{path} is not kenning's plugin; nothing was changed"]
    _release_dependency_install(path.parent.parent)
    remove_owned(path)
    return [f"removed the kenning plugin {path}"]


def installed(project: Path | None, environ: dict[str, str] | None = None) -> str | None:
    """The installed plugin's text (None when not installed)."""
    path = plugin_path(project, environ)
    return path.read_text(encoding="utf-8") if _is_ours(path) else None
