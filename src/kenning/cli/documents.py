"""`kenning ingest PATH|URL`: store a file or a web page as document_chunk memories (registered by cli/ingest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kenning.cli.context import console, fail, print_json
from kenning.cli.memory import backend


def _body(source: str, title: str | None, project: str | None, tags: list[str]) -> dict:
    body: dict = {"title": title, "project": project, "tags": tags}
    if source.startswith(("http://", "https://")):
        body["url"] = source
        return body
    path = Path(source).expanduser()
    if not path.is_file():
        fail(f"{source}: no such file (give a path or an http(s) URL)", code=2)
    try:
        body["text"] = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        fail(f"{source}: not UTF-8 text", code=2)
    body["title"] = title or path.name
    if path.suffix.lower() in (".html", ".htm"):
        body["content_type"] = "text/html"
    return body


def ingest(
    source: str = typer.Argument(..., help="A text/Markdown/HTML file or an http(s) URL."),
    title: Optional[str] = typer.Option(None, help="Title (defaults to the file name or the page title)."),
    project: Optional[str] = typer.Option(None, "--project", "-p"),
    tag: list[str] = typer.Option([], "--tag", help="Tag (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Ingest a document: fetch/read, chunk with overlap, store chunks as memories."""
    body = _body(source, title, project, tag)
    columns = (TextColumn("{task.description:>10}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with backend() as b, Progress(*columns, console=console, transient=as_json) as progress:
        task = progress.add_task("queued", total=None)

        def note(stage: str, done: int, total: int) -> None:
            progress.update(task, description=stage, total=total or None, completed=done)

        state = b.ingest_document(body, note)  # the daemon's documents worker, or here
    state.pop("raw_content", None)
    if as_json:
        print_json(state)
    elif state["status"] == "failed":
        fail(f"document {state['id']} failed: {state.get('error')}")
    else:
        console.print(f"ingested [bold]{state['id']}[/bold]: {state.get('chunk_count')} chunk(s)"
                      f" from {state.get('title') or source}")
    if state["status"] == "failed":
        raise typer.Exit(1)
