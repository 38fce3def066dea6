"""`kenning init` (and the first `kenning daemon start`): what was set up, which agents this machine
has, and the one command that connects each — a few lines, never more than a screen."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import typer

from kenning.cli.context import console, fail, settings
from kenning.client import KenningClient


@dataclass(frozen=True)
class Agent:
    name: str
    folder: Path  # its presence says the agent was run for this user
    connect: str
    binary: str  # its command: on PATH says the agent is installed
    path: str | None = None  # the PATH it is looked up on (None: this process's)

    def found(self) -> str | None:
        """How this machine shows the agent ('claude on PATH', '~/.claude'), or None."""
        if shutil.which(self.binary, path=self.path):
            return f"{self.binary} on PATH"
        return str(self.folder) if self.folder.is_dir() else None


def agents(environ: dict[str, str] | None = None) -> list[Agent]:
    """The agents kenning connects to: where each keeps its user config, and its command."""
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or Path.home())
    xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    path = env.get("PATH", os.defpath)
    return [
        Agent("Claude Code", Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude"), "kenning connect claude-code",
              "claude", path),
        Agent("Codex", Path(env.get("CODEX_HOME") or home / ".codex"), "kenning connect codex", "codex", path),
        Agent("Gemini CLI", home / ".gemini", "kenning connect gemini", "gemini", path),
        Agent("OpenCode", xdg / "opencode", "kenning connect opencode", "opencode", path),
        Agent("Copilot CLI", Path(env.get("COPILOT_HOME") or home / ".copilot"), "kenning connect copilot", "copilot",
              path),
    ]


def _claude_state() -> str | None:
    """'plugin kenning@…' / 'hooks in …' when Claude Code already runs kenning, else None."""
    from kenning.hooks.plugin import enabled_plugin, settings_with_hooks

    plugin = enabled_plugin(Path.cwd())
    if plugin:
        return f"connected (plugin {plugin})"
    hooks = settings_with_hooks(Path.cwd())
    return f"connected (hooks in {hooks})" if hooks else None


def next_steps(running: bool, base_url: str) -> list[str]:
    """The agent lines and what to do next (shared by `init` and the first `daemon start`)."""
    lines: list[str] = []
    found = [agent for agent in agents() if agent.found()]
    for agent in found:
        state = _claude_state() if agent.name == "Claude Code" else None
        lines.append(f"  {agent.name + ':':13} {state or agent.connect}")
        if agent.name == "Claude Code" and state is None:
            lines.append("  {:13} or its plugin: claude plugin marketplace add <kenning repo>; "
                         "claude plugin install kenning@kenning".format(""))
    if not found:
        lines.append("  no agent found (no claude, codex, gemini, opencode or copilot on PATH, no ~/.claude, "
                     "~/.codex, ~/.gemini, ~/.config/opencode or ~/.copilot); "
                     "`kenning connect mcp` prints an MCP entry for any other client")
    head = ["agents on this machine — connect each with:" if found else "agents:"]
    tail = [] if running else ["start the daemon: kenning daemon start"]
    tail += ['then: kenning remember "…"  ·  kenning recall "…"  ·  dashboard ' + base_url]
    return head + lines + tail


def init() -> None:
    """Set up kenning for this user: data folder, embedding model, and the agents found on this machine."""
    from kenning.core.errors import ConfigError
    from kenning.providers.registry import check_model_files

    cfg = settings()
    existed = cfg.home.is_dir()
    cfg.home.mkdir(parents=True, exist_ok=True)
    try:
        check_model_files(cfg.embedding)  # builds the default model here on first need (one line on stderr)
    except ConfigError as exc:
        fail(str(exc), code=2)
    running = KenningClient(cfg.base_url, token=cfg.auth_token).is_up()
    lines = [f"kenning data: {cfg.home} ({'already there' if existed else 'created'})",
             f"daemon: {'running at ' + cfg.base_url if running else 'not running'}"]
    for line in lines + next_steps(running, cfg.base_url):
        console.print(line, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("init")(init)
