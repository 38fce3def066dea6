"""`kenning connect claude-code|mcp`: install, inspect or remove kenning in a harness's config."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Optional

import typer

from kenning.cli.context import console, fail, settings
from kenning.cli.ingest import ingest_git
from kenning.core.config import default_home, load_settings
from kenning.core.errors import ConfigError, KenningError
from kenning.hooks.install import (
    InstallError, install_claude_code, install_mcp, mcp_config, uninstall_claude_code, uninstall_mcp,
)
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


def register(app: typer.Typer) -> None:
    app.add_typer(connect_app, name="connect")
