"""`kenning doctor`'s harness checks: for each harness kenning is installed in (user config, and
this project's), are the hooks all there, do they reach this daemon, and — Codex — are they
trusted (Codex skips untrusted hooks silently)?

A hook command carries the KENNING_* variables its daemon needs (`env KENNING_HOME=… kenning
hook …`; the OpenCode plugin holds them in its source); the daemon it reaches is worked out the
way the hook itself does (hooks.transport.daemon_endpoint over those variables alone).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import NotRequired, TypedDict

from kenning.hooks.connectors import codex, copilot, cursor, gemini, opencode
from kenning.hooks.connectors.hookjson import installed_commands
from kenning.hooks.install import CLAUDE_EVENTS, InstallError, through_console_script
from kenning.hooks.transport import daemon_endpoint

_PLUGIN_ENV = re.compile(r"^const KENNING_ENV = (\{.*\});$", re.MULTILINE)


class HarnessCheck(TypedDict):
    """One installed harness and scope, as `kenning doctor` shows it (report["harnesses"]). Every check
    here fills all the keys; the entry the CLI makes when the checks themselves fail has no events,
    reaches or trusted."""

    harness: str
    scope: str  # user | project
    path: str  # the file holding kenning's hooks (or MCP entry, or plugin)
    events: NotRequired[list[str]]
    reaches: NotRequired[list[str]]  # the daemon URLs the hooks talk to
    trusted: NotRequired[bool | None]  # Codex only: None when unknown
    problems: list[str]
    fix: NotRequired[str]


def command_env(command: str) -> dict[str, str]:
    """The KENNING_* variables a hook command sets (`env K=V …` or bare `K=V …` in front)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return {}
    env: dict[str, str] = {}
    for word in words:
        if word == "env":
            continue
        name, sep, value = word.partition("=")
        if not sep or not name.replace("_", "").isalnum():
            break
        if name.startswith("KENNING_"):
            env[name] = value
    return env


def reaches(env: dict[str, str]) -> str:
    """The daemon URL a hook with these variables (and no others) talks to."""
    return daemon_endpoint(dict(env))[0]


def _check(harness: str, scope: str, where: Path, expected: list[str], commands: dict[str, list[str]],
           here: str) -> HarnessCheck:
    problems: list[str] = []
    missing = [event for event in expected if event not in commands]
    if missing:
        problems.append(f"hooks missing: {', '.join(missing)}")
    targets = sorted({reaches(command_env(c)) for found in commands.values() for c in found})
    if targets and targets != [here]:
        problems.append(f"the hooks reach {', '.join(targets)}, not this daemon ({here})")
    if any(through_console_script(c) for found in commands.values() for c in found):
        problems.append("the hooks run through the `kenning` console script, ~6 ms of CPU more per agent step "
                        "than the command kenning connect installs now")
    return {"harness": harness, "scope": scope, "path": str(where), "events": sorted(commands),
            "reaches": targets, "trusted": None, "problems": problems}


def _scopes(project: Path) -> list[tuple[str, Path | None]]:
    return [("user", None), ("project", project)]


def check_harnesses(here: str, project: Path, codex_bin: str | None = None,
                    environ: dict[str, str] | None = None) -> list[HarnessCheck]:
    """One entry per installed harness and scope: {harness, scope, path, events, reaches, trusted,
    problems, fix}; `here` is this daemon's URL."""
    found: list[HarnessCheck] = []
    for scope, where in _scopes(project):
        claude = (where or Path.home()) / ".claude" / "settings.json"
        commands = installed_commands(claude)
        if commands:
            entry = _check("claude-code", scope, claude, list(CLAUDE_EVENTS), commands, here)
            found.append(_with_fix(entry, "claude-code", scope))
        hooks_file = codex.hooks_path(where, environ)
        commands = installed_commands(hooks_file)
        if commands:
            entry = _check("codex", scope, hooks_file, [s.event for s in codex.SPECS], commands, here)
            entry["trusted"] = _codex_trusted(hooks_file, project, codex_bin, environ, entry["problems"])
            found.append(_with_fix(entry, "codex", scope))
        settings = gemini.settings_path(where)
        commands = installed_commands(settings)
        if commands:
            found.append(_with_fix(_check("gemini", scope, settings, [s.event for s in gemini.SPECS], commands, here),
                                   "gemini", scope))
        commands = copilot.installed_commands(environ) if where is None else {}  # user-level only
        if commands:
            found.append(_with_fix(_check("copilot", scope, copilot.settings_path(environ), list(copilot.EVENTS),
                                          commands, here), "copilot", scope))
        source = opencode.installed(where, environ)
        if source is not None:
            found.append(_with_fix(_opencode_check(scope, opencode.plugin_path(where, environ), source, here),
                                   "opencode", scope))
        mcp = cursor.mcp_path(where)
        if _has_kenning_mcp(mcp):
            entry = {"harness": "cursor", "scope": scope, "path": str(mcp), "events": [], "reaches": [],
                     "trusted": None, "problems": []}
            if scope == "project" and not cursor.rules_path(project).exists():
                entry["problems"].append(f"no standing-rules file {cursor.rules_path(project)}")
            found.append(_with_fix(entry, "cursor", scope))
    return found


def _with_fix(entry: HarnessCheck, harness: str, scope: str) -> HarnessCheck:
    flag = " --project" if scope == "project" else ""
    if any("trust" in p for p in entry["problems"]) and not any("missing" in p or "reach" in p
                                                                 for p in entry["problems"]):
        entry["fix"] = f"kenning connect codex --trust{flag}"
    elif harness == "cursor":
        entry["fix"] = f"kenning connect cursor{flag}"
    else:
        entry["fix"] = f"kenning connect {harness}{flag} (in a shell pointing at this daemon)"
    return entry


def _codex_trusted(hooks_file: Path, project: Path, codex_bin: str | None, environ: dict[str, str] | None,
                   problems: list[str]) -> bool | None:
    binary = codex.find_codex(codex_bin)
    home = codex.codex_home(environ)
    if binary is None:  # what config.toml records, unverified
        config = home / "config.toml"
        text = config.read_text(encoding="utf-8", errors="replace") if config.exists() else ""
        if codex.BEGIN not in text or str(hooks_file) not in text:
            problems.append("not recorded as trusted in config.toml (Codex skips untrusted hooks)")
            return False
        return None
    try:
        listed = [h for h in codex.list_hooks(binary, home, project)
                  if Path(str(h.get("sourcePath") or "")).resolve() == hooks_file.resolve()
                  and "kenning" in str(h.get("command"))]
    except (InstallError, OSError) as exc:
        problems.append(f"could not ask codex which hooks it trusts ({exc})")
        return None
    untrusted = [h["key"] for h in listed if h.get("trustStatus") != "trusted"]
    if not listed:
        problems.append("codex does not list kenning's hooks (a project's hooks load once Codex trusts the project)")
        return False
    if untrusted:
        problems.append(f"{len(untrusted)} hook(s) not trusted by codex (it skips them silently)")
        return False
    return True


def _opencode_check(scope: str, path: Path, source: str, here: str) -> HarnessCheck:
    match = _PLUGIN_ENV.search(source)
    try:
        env = json.loads(match.group(1)) if match else {}
    except ValueError:
        env = {}
    entry: HarnessCheck = {"harness": "opencode", "scope": scope, "path": str(path), "events": ["plugin"],
                           "reaches": [reaches(env)], "trusted": None, "problems": []}
    if entry["reaches"] != [here]:
        entry["problems"].append(f"the plugin reaches {entry['reaches'][0]}, not this daemon ({here})")
    if source != opencode.plugin_source(env):
        entry["problems"].append("the plugin is from another kenning version")
    return entry


def _has_kenning_mcp(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("mcpServers"), dict) and "kenning" in data["mcpServers"]


def daemon_url(home: Path, host: str, port: int) -> str:
    """This daemon's URL as a hook would spell it."""
    return daemon_endpoint({"KENNING_HOME": str(home), "KENNING_HOST": host, "KENNING_PORT": str(port)})[0]

