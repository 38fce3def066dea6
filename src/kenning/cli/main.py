"""The `kenning` command: thin typer commands over the daemon client or the local store."""

from __future__ import annotations

import sys
from importlib import import_module

import typer
from typer import _click as click  # the click typer 0.29 builds its commands with (it vendors one)
from typer.core import TyperCommand, TyperGroup

from kenning import __version__

# Every command, in the order `kenning --help` lists it: the module under kenning.cli whose
# `register(app)` adds it, and its one-line help (the first paragraph of its help text). The module
# is imported only when its command runs, so `kenning --help` and each command load only what they
# need. A new command: add it to its module's `register(app)` and a line here (in the place the
# help should list it); tests/cli/test_lazy_commands.py checks this table against what the modules
# register, help text included.
COMMANDS: dict[str, tuple[str, str]] = {
    "remember": ("memory", "Store a memory (exact duplicates are detected, not stored twice)."),
    "recall": ("memory", "Find memories by words and meaning; each hit says how well it matches (strong, likely; "
                         "weak ones with --all)."),
    "show": ("memory", "Show one memory with its history."),
    "edit": ("memory", "Change a memory; the old values stay in its history."),
    "forget": ("memory", "Tombstone a memory (recoverable), or purge it for good."),
    "recover": ("memory", "Bring back a forgotten (tombstoned) memory."),
    "list": ("memory", "List memories, newest first."),
    "stats": ("memory", "Counts by type and project, database size, embedding model."),
    "import": ("portability", "Import memories, all or nothing: every record is validated before any is stored."),
    "export": ("portability", "Export live memories as JSON, JSONL, Markdown or a CLAUDE.md; `kenning import` reads "
                         "each back."),
    "doctor": ("observability", "Diagnose kenning: every health domain, and the fix for each problem. "
                                "Exit 2 when unhealthy."),
    "dashboard": ("observability", "Print the dashboard URL (and open it) — the daemon must be running."),
    "hook": ("hook", "Run a Claude Code hook: read its JSON on stdin, ask the daemon, print what Claude Code "
                     "expects."),
    "mcp": ("mcp", "Serve kenning's memory tools to an MCP client over stdio (needs the daemon running)."),
    "serve": ("daemon", "Run the daemon in the foreground (HTTP API, dashboard, workers)."),
    "init": ("init", "Set up kenning for this user: data folder, embedding model, and the agents found on this "
                     "machine."),
    "version": ("main", "Print the version."),
    "graph": ("graph", "Knowledge graph: entities and how they relate."),
    "code": ("code", "Code graph: index a repository, impact of a change."),
    "ingest": ("ingest", "Ingest a document (`kenning ingest PATH|URL`) or a git history (`kenning ingest git`)."),
    "pipeline": ("pipeline", "Extraction pipeline: workers, job queue, LLM budget."),
    "predictor": ("predictor", "The learned memory scorer: state, training, audits."),
    "sessions": ("sessions", "Inspect agent sessions."),
    "review": ("review", "Review what kenning learned: accept, edit or reject (non-destructive)."),
    "connect": ("connect", "Connect kenning to an agent harness."),
    "disconnect": ("connect", "Remove kenning from every agent it is connected to (your config and this project's)."),
    "token": ("tokens", "Per-user bearer tokens (team server)."),
    "daemon": ("daemon", "Run kenning in the background."),
}


class Unloaded(TyperCommand):
    """A command whose module is not imported yet: its name and one-line help, for `kenning --help`."""


def _flags_untyped(command: click.Command) -> click.Command:
    """No `<bool>` beside a flag in --help (typer 0.29 prints one for every flag, --help included): a
    flag's metavar is empty, in this command and the sub-commands of a group."""
    original = command.get_params

    def get_params(ctx: click.Context) -> list[click.Parameter]:
        params = original(ctx)
        for param in params:
            if getattr(param, "is_flag", False):  # typer 0.29 vendors its own click: no isinstance
                param.metavar = ""
        return params

    command.get_params = get_params  # type: ignore[method-assign]
    for sub in getattr(command, "commands", {}).values():
        _flags_untyped(sub)
    return command


def module_commands(module: str) -> dict[str, click.Command]:
    """The click commands `kenning.cli.<module>.register` adds, built as typer builds the app's own."""
    sub = typer.Typer(rich_markup_mode="rich")
    import_module(f"kenning.cli.{module}").register(sub)
    return {name: _flags_untyped(command) for name, command in typer.main.get_group(sub).commands.items()}


class LazyGroup(TyperGroup):
    """The `kenning` group: lists COMMANDS without importing them; imports a command's module when it
    is resolved to run (or to show its own --help)."""

    def __init__(self, **attrs) -> None:
        super().__init__(**attrs)
        commands: dict[str, click.Command] = {name: Unloaded(name, help=text) for name, (_, text) in COMMANDS.items()
                                              if name not in self.commands}
        commands.update(self.commands)  # defined here (version) or registered eagerly
        order = {name: i for i, name in enumerate(COMMANDS)}
        self.commands = dict(sorted(commands.items(), key=lambda item: order.get(item[0], len(order))))
        _flags_untyped(self)

    def load(self, name: str) -> click.Command | None:
        """The real command `name` (its module's commands replace their placeholders)."""
        if isinstance(self.commands.get(name), Unloaded):
            for loaded_name, command in module_commands(COMMANDS[name][0]).items():
                if isinstance(self.commands.get(loaded_name), Unloaded) or loaded_name not in self.commands:
                    self.commands[loaded_name] = command
        return self.commands.get(name)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        if args:
            self.load(args[0])
        return super().resolve_command(ctx, args)


app = typer.Typer(
    name="kenning", cls=LazyGroup, no_args_is_help=True, add_completion=False, rich_markup_mode="rich",
    help="Local-first memory for AI coding agents. Honours KENNING_HOME and KENNING_PORT.",
)



def _print_version(value: bool) -> None:
    if value:
        print(f"kenning {__version__}")
        raise typer.Exit()


@app.callback()
def _kenning(
    version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=_print_version,
                                 help="Print the version and exit."),
) -> None:
    # Sub-commands are added at need (LazyGroup), so typer sees one command here: a callback keeps it a group.
    pass


@app.command("version")
def version() -> None:
    """Print the version."""
    print(__version__)


def main() -> None:
    """Console-script entry: any KenningError that escapes becomes one line and exit code 1."""
    from kenning.core.errors import KenningError

    try:
        app()
    except KenningError as exc:
        from kenning.cli.context import err_console

        err_console.print(f"[red]error:[/red] {exc}", highlight=False)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
