"""Shared CLI plumbing: settings, the backend (daemon or local store), output helpers."""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from typing import TYPE_CHECKING, NoReturn
import typer
from rich.console import Console

if TYPE_CHECKING:
    from kenning.core.config import Settings

console = Console()
err_console = Console(stderr=True)


@lru_cache(maxsize=1)
def settings() -> Settings:
    """The whole configuration (pydantic, every section): loaded only by the commands that need it — a
    command answered by the daemon finds it through hooks.transport.daemon_endpoint instead."""
    from kenning.core.config import load_settings
    from kenning.core.errors import ConfigError

    try:
        return load_settings()
    except ConfigError as exc:
        fail(str(exc), code=2)
        raise  # unreachable; keeps type checkers honest


def fail(message: str, code: int = 1) -> NoReturn:
    """One line on stderr, then exit with `code`."""
    err_console.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def print_json(data: object) -> None:
    """Any JSON-able value (others print as their str), indented."""
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
