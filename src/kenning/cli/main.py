"""The `kenning` command: thin typer commands over the daemon client or the local store."""

from __future__ import annotations

import sys

import click
import typer

from kenning import __version__
from kenning.cli import code as code_cli
from kenning.cli import daemon, memory
from kenning.cli import ingest as ingest_cli
from kenning.cli import init as init_cli
from kenning.cli import graph as graph_cli
from kenning.cli import observability as observability_cli
from kenning.cli import pipeline as pipeline_cli
from kenning.cli import predictor as predictor_cli
from kenning.cli import connect as connect_cli
from kenning.cli import hook as hook_cli
from kenning.cli import mcp as mcp_cli
from kenning.cli import sessions as sessions_cli
from kenning.cli import review as review_cli
from kenning.cli import tokens as tokens_cli
from kenning.cli.context import err_console
from kenning.core.errors import KenningError

app = typer.Typer(
    name="kenning", no_args_is_help=True, add_completion=False, rich_markup_mode="rich",
    help="Local-first memory for AI coding agents. Honours KENNING_HOME and KENNING_PORT.",
)
memory.register(app)
graph_cli.register(app)
code_cli.register(app)
observability_cli.register(app)
ingest_cli.register(app)
pipeline_cli.register(app)
predictor_cli.register(app)
sessions_cli.register(app)
review_cli.register(app)
connect_cli.register(app)
hook_cli.register(app)
mcp_cli.register(app)
tokens_cli.register(app)
app.command("serve")(daemon.serve)
app.command("init")(init_cli.init)
app.add_typer(daemon.daemon_app, name="daemon")


@app.command("version")
def version() -> None:
    """Print the version."""
    print(__version__)


def main() -> None:
    """Console-script entry: any KenningError that escapes becomes one line and exit code 1."""
    try:
        app()
    except KenningError as exc:
        err_console.print(f"[red]error:[/red] {exc}", highlight=False)
        sys.exit(1)
    except click.exceptions.Abort:
        sys.exit(130)
