"""`kenning ingest`: documents (`kenning ingest PATH|URL`) and git history (`kenning ingest git [PATH]`).

`ingest` is a group whose default command is `document`, so `kenning ingest notes.md` keeps
working; `kenning ingest git` stores one memory per commit (kenning.memory.git_history),
through the daemon when it runs (progress polled from GET /api/ingest/git/{id}), else in
this process on the local store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from typer import _click as click  # the click typer 0.29 builds its commands with (it vendors one)
from typer.core import TyperGroup

from kenning.cli.context import console, fail, print_json
from kenning.cli.documents import ingest as ingest_document
from kenning.cli.memory import backend
from kenning.core.errors import KenningError
from kenning.memory.git_history import open_repository

class _DefaultToDocument(TyperGroup):
    """Route `kenning ingest X …` to `ingest document X …` unless X names a subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["document", *args]
        return super().parse_args(ctx, args)


ingest_app = typer.Typer(cls=_DefaultToDocument, no_args_is_help=True,
                         help="Ingest a document (`kenning ingest PATH|URL`) or a git history (`kenning ingest git`).")
ingest_app.command("document")(ingest_document)


def _columns() -> tuple:
    return (TextColumn("{task.description:>8}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())


def ingest_git(path: Path, project: Optional[str], *, as_json: bool = False) -> dict:
    """Ingest `path`'s new commits with a progress bar; the finished run as a dict."""
    try:
        repo = open_repository(path)
    except KenningError as exc:
        fail(str(exc), code=2)
    with backend() as b, Progress(*_columns(), console=console, transient=as_json) as progress:
        task = progress.add_task("commits", total=None)
        run = b.ingest_git(repo, project, lambda done, total: progress.update(task, total=total, completed=done))
    if run["status"] == "failed":
        fail(f"git ingest of {run['repo']} failed: {run['error']}")
    return run


@ingest_app.command("git")
def git(
    path: Path = typer.Argument(Path("."), help="A folder inside the git repository (default: here)."),
    project: Optional[str] = typer.Option(None, "--project", "-p",
                                          help="Project of the memories (default: the repository's folder name)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Ingest git history: one memory per commit (subject + body), merges skipped, incremental."""
    run = ingest_git(path, project, as_json=as_json)
    if as_json:
        print_json(run)
        return
    console.print(f"ingested {run['created']} new commit(s) from {run['repo']} into project "
                  f"[bold]{run['project']}[/bold] ({run['skipped_known']} already known, "
                  f"{run['deduped']} duplicate(s))", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(ingest_app, name="ingest")
