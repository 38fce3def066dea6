"""`kenning connect claude-code|codex|gemini|opencode|copilot|cursor|mcp`: install, inspect or remove kenning in a
harness's config."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Optional

import typer

from kenning.cli.context import console, fail, settings
from kenning.cli.ingest import ingest_git
from kenning.cli.memory import backend as memory_backend
from kenning.core.config import default_home, load_settings
from kenning.core.errors import ConfigError, KenningError
from kenning.hooks.install import (
    InstallError, install_claude_code, install_mcp, mcp_config, uninstall_claude_code, uninstall_mcp,
)
from kenning.hooks.adapters.hookrun import project_of
from kenning.hooks.connectors import codex as codex_connector
from kenning.hooks.connectors import copilot as copilot_connector
from kenning.hooks.connectors import cursor as cursor_connector
from kenning.hooks.connectors import gemini as gemini_connector
from kenning.hooks.connectors import opencode as opencode_connector
from kenning.hooks.plugin import enabled_plugin
from kenning.memory.git_history import open_repository

connect_app = typer.Typer(no_args_is_help=True, help="Connect kenning to an agent harness.")


def setup_env() -> dict[str, str]:
    """KENNING_HOME / KENNING_HOST / KENNING_PORT for the installed commands, each only when a bare
    process (no KENNING_* variables) would not find this daemon by itself."""
    cfg = settings()
    env: dict[str, str] = {}
    if cfg.home.expanduser().resolve() != default_home({}).resolve():
        env["KENNING_HOME"] = str(cfg.home.expanduser().resolve())
    try:
        bare = load_settings({"KENNING_HOME": str(cfg.home)})  # what config.yaml alone says
        bare_host, bare_port = bare.host, bare.port
    except ConfigError:
        bare_host, bare_port = None, None
    if cfg.host != bare_host:
        env["KENNING_HOST"] = cfg.host
    if cfg.port != bare_port:
        env["KENNING_PORT"] = str(cfg.port)
    return env


def _claude_settings_path(project: bool, user: bool, settings: Optional[Path]) -> Path:
    if settings is not None:
        return settings
    if project and user:
        fail("choose one of --project and --user", code=2)
    if project:
        return Path.cwd() / ".claude" / "settings.json"
    return Path.home() / ".claude" / "settings.json"


@connect_app.command("claude-code")
def claude_code(
    project: bool = typer.Option(False, "--project", help="This project's .claude/settings.json."),
    user: bool = typer.Option(False, "--user", help="~/.claude/settings.json (the default)."),
    settings_file: Optional[Path] = typer.Option(None, "--settings", help="Explicit settings file."),
    uninstall: bool = typer.Option(False, "--uninstall", help="Remove kenning's hooks (restores the original)."),
    with_history: bool = typer.Option(False, "--ingest-git",
                                    help="Also store this git repository's history as memories (`kenning ingest git`)."),
) -> None:
    """Install Claude Code hooks: SessionStart, UserPromptSubmit, PostToolUse, PostToolUseFailure, PreCompact,
    Stop, SessionEnd.

    When this shell points kenning at another home or port (KENNING_HOME, KENNING_PORT), the hook
    commands carry those variables, so the hooks reach the same daemon."""
    path = _claude_settings_path(project, user, settings_file)
    plugin = None if uninstall else enabled_plugin(Path.cwd())
    if plugin is not None:  # its hooks already run: a second set would fire every hook twice
        console.print(f"kenning's Claude Code plugin ({plugin}) is enabled, and its hooks already run: nothing was "
                      f"added to {path} (`claude plugin uninstall {plugin}` first to use settings hooks instead)",
                      highlight=False, soft_wrap=True)
        return
    try:
        outcome = uninstall_claude_code(path) if uninstall else install_claude_code(path, setup_env())
    except (InstallError, OSError) as exc:
        fail(str(exc), code=2)
    console.print(outcome.message, highlight=False, soft_wrap=True)
    if not uninstall:
        _offer_git_history(with_history)


def _offer_git_history(run_it: bool) -> None:
    """Inside a git repository: ingest its history (--ingest-git) or print the command. Never asks."""
    try:
        repo = open_repository(Path.cwd())
    except KenningError:
        if run_it:
            fail(f"--ingest-git: {Path.cwd()} is not inside a git repository", code=2)
        return
    if not run_it:
        console.print(f"This is the git repository {repo}; to give the agent its history as memory, run:\n"
                      f"  kenning ingest git {shlex.quote(str(repo))}", highlight=False, soft_wrap=True)
        return
    run = ingest_git(repo, None)
    console.print(f"ingested {run['created']} commit(s) of {repo} into project {run['project']}", highlight=False)


@connect_app.command("mcp")
def mcp(
    install: bool = typer.Option(False, "--install", help="Write the server into a client config file."),
    uninstall: bool = typer.Option(False, "--uninstall", help="Remove it from the client config file."),
    path: Path = typer.Option(Path(".mcp.json"), "--path", help="Client config (.mcp.json, claude_desktop_config.json…)."),
) -> None:
    """Print the MCP client config for `kenning mcp` (or install / remove it)."""
    if install and uninstall:
        fail("choose one of --install and --uninstall", code=2)
    if not install and not uninstall:
        print(json.dumps(mcp_config(setup_env()), indent=2))
        return
    try:
        outcome = uninstall_mcp(path) if uninstall else install_mcp(path, setup_env())
    except (InstallError, OSError) as exc:
        fail(str(exc), code=2)
    console.print(outcome.message, highlight=False, soft_wrap=True)


def _scope(project: bool, user: bool) -> Optional[Path]:
    """The project folder (--project: the current directory), or None for the user's config."""
    if project and user:
        fail("choose one of --project and --user", code=2)
    return Path.cwd() if project else None


def _say(lines: list[str]) -> None:
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)


def _run(action: Callable[[], list[str]]) -> None:
    """Do one connector action and print what it says; a file that cannot be changed is exit 2."""
    try:
        _say(action())
    except (InstallError, OSError) as exc:
        fail(str(exc), code=2)


_PROJECT = typer.Option(False, "--project", help="This project's config (in the current directory).")
_USER = typer.Option(False, "--user", help="Your user config (the default).")
_UNINSTALL = typer.Option(False, "--uninstall", help="Remove kenning (restores the original).")


@connect_app.command("codex")
def codex(
    project: bool = _PROJECT, user: bool = _USER, uninstall: bool = _UNINSTALL,
    trust_only: bool = typer.Option(False, "--trust", help="Only record the installed hooks as trusted."),
    codex_bin: Optional[str] = typer.Option(None, "--codex", help="The codex executable (default: on PATH)."),
) -> None:
    """Install Codex CLI hooks ($CODEX_HOME/hooks.json or .codex/hooks.json) and record them as trusted.

    Codex skips hooks it does not trust; trust is recorded in $CODEX_HOME/config.toml with the
    hashes `codex app-server` reports. Codex has no session-end event: kenning ends a Codex
    session once it has been idle (sessions.idle_end_minutes) after its last turn."""
    scope = _scope(project, user)
    if uninstall:
        _run(lambda: codex_connector.uninstall(scope))
    elif trust_only:
        _run(lambda: codex_connector.trust_messages(scope, codex_bin))
    else:
        _run(lambda: codex_connector.install(scope, setup_env(), codex_bin))


@connect_app.command("gemini")
def gemini(project: bool = _PROJECT, user: bool = _USER, uninstall: bool = _UNINSTALL) -> None:
    """Install Gemini CLI hooks (~/.gemini/settings.json or .gemini/settings.json): SessionStart,
    BeforeAgent, AfterTool, AfterAgent, PreCompress, SessionEnd (timeouts in milliseconds)."""
    scope = _scope(project, user)
    _run(lambda: gemini_connector.uninstall(scope) if uninstall else gemini_connector.install(scope, setup_env()))


@connect_app.command("opencode")
def opencode(project: bool = _PROJECT, user: bool = _USER, uninstall: bool = _UNINSTALL) -> None:
    """Install the kenning plugin for OpenCode (~/.config/opencode/plugins/kenning.js or
    .opencode/plugins/kenning.js): a dependency-free file that sends OpenCode's events to kenning
    and adds the memories to the system prompt; a session ends when OpenCode goes idle."""
    scope = _scope(project, user)
    _run(lambda: opencode_connector.uninstall(scope) if uninstall else opencode_connector.install(scope, setup_env()))


@connect_app.command("copilot")
def copilot(uninstall: bool = _UNINSTALL) -> None:
    """Install GitHub Copilot CLI hooks in ~/.copilot/settings.json ($COPILOT_HOME when set): sessionStart,
    userPromptSubmitted, postToolUse, postToolUseFailure, errorOccurred, agentStop, preCompact, sessionEnd.

    User-level only: a repository's .github/hooks/ is the repository's, and kenning never writes there."""
    _run(lambda: copilot_connector.uninstall() if uninstall else copilot_connector.install(setup_env()))


@connect_app.command("cursor")
def cursor(
    project: bool = _PROJECT, user: bool = _USER, uninstall: bool = _UNINSTALL,
    rules_only: bool = typer.Option(False, "--rules", help="Only rewrite .cursor/rules/kenning.mdc."),
    project_name: Optional[str] = typer.Option(None, "--name", help="The kenning project (default: this folder's)."),
) -> None:
    """Add the kenning MCP server to Cursor (.cursor/mcp.json or ~/.cursor/mcp.json) and write this
    project's standing rules to .cursor/rules/kenning.mdc (rerun with --rules to refresh them)."""
    scope = _scope(project, user)
    here = Path.cwd()
    if uninstall:
        _run(lambda: cursor_connector.uninstall(scope, here))
        return
    if not rules_only:
        _run(lambda: cursor_connector.install(scope, setup_env()))
    name = project_name or project_of(str(here)) or here.name
    with memory_backend() as b:
        found = [m for kind in cursor_connector.RULE_TYPES
                 for m in b.list(limit=1000, offset=0, project=name, type=kind)["items"]]
    rules = cursor_connector.standing(found, settings().sessions.ranking.standing_min_confidence)
    _run(lambda: [cursor_connector.write_rules(here, name, rules).message])


def _remove(harness: str, scope: Optional[Path], path: Path) -> list[str]:
    """Undo one harness's install (scope None: the user's config; a folder: that project's)."""
    if harness == "claude-code":
        return [uninstall_claude_code(path).message]
    removers: dict[str, Callable[[], list[str]]] = {
        "cursor": lambda: cursor_connector.uninstall(scope, Path.cwd()),
        "codex": lambda: codex_connector.uninstall(scope), "gemini": lambda: gemini_connector.uninstall(scope),
        "opencode": lambda: opencode_connector.uninstall(scope), "copilot": lambda: copilot_connector.uninstall(),
    }
    remove = removers.get(harness)
    return remove() if remove else [f"{harness}: remove it with `kenning connect {harness} --uninstall`"]


def disconnect(
    keep_project: bool = typer.Option(False, "--user-only", help="Leave this project's agent configs as they are."),
) -> None:
    """Remove kenning from every agent it is connected to (your config and this project's).

    Each agent's config is restored as it was before `kenning connect` (byte for byte where kenning
    kept the original). Your memories stay; the lines printed at the end say how to remove them and
    kenning itself."""
    from kenning.hooks.connectors.check import check_harnesses, daemon_url

    cfg = settings()
    here = Path.cwd()
    checks = [c for c in check_harnesses(daemon_url(cfg.home.expanduser(), cfg.host, cfg.port), here)
              if not (keep_project and c["scope"] == "project")]
    for check in checks:
        scope = here if check["scope"] == "project" else None
        _run(lambda: _remove(check["harness"], scope, Path(check["path"])))
    plugin = enabled_plugin(here)
    if not checks and plugin is None:
        console.print("kenning is not connected to any agent (user config, or this project's)", highlight=False)
    if plugin is not None:
        console.print(f"the Claude Code plugin {plugin} is enabled: remove it with `claude plugin uninstall {plugin}`",
                      highlight=False, soft_wrap=True)
    console.print(f"your memories stay in {cfg.home}. To remove kenning entirely: `kenning daemon stop`, "
                  f"`rm -rf {shlex.quote(str(cfg.home))}`, then `uv tool uninstall kenning` (or `pipx uninstall "
                  "kenning`, `pip uninstall kenning`)", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.add_typer(connect_app, name="connect")
    app.command("disconnect")(disconnect)
