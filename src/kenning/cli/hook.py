"""`kenning hook <event>`: run one harness hook (stdin JSON → daemon → stdout), always exit 0.

The console script routes `kenning hook` straight to `kenning.hooks.claude_code.main`
(see cli/entry.py); this typer command exists for --help and for `python -m kenning`.
"""

from __future__ import annotations

import sys

import typer

from kenning.hooks.claude_code import EVENTS
from kenning.hooks.claude_code import main as hook_main


def hook(
    event: str = typer.Argument(..., help=f"One of: {', '.join(EVENTS)}."),
) -> None:
    """Run a Claude Code hook: read its JSON on stdin, ask the daemon, print what Claude Code expects."""
    sys.exit(hook_main([event]))


def register(app: typer.Typer) -> None:
    app.command("hook")(hook)
