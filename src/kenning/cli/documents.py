"""`kenning ingest PATH|URL`: store a file or a web page as document_chunk memories (registered by cli/ingest.py)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kenning.cli.context import console, fail, print_json
from kenning.cli.memory import backend

POLL_S = 0.25
QUEUED_GRACE_S = 2.0
MAX_WAIT_S = 3600.0


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


def _via_daemon(client, body: dict, progress: Progress, task) -> dict:
    doc = client.request("POST", "/api/documents", json=body)
    started = time.monotonic()
    nudged = False
    while time.monotonic() - started < MAX_WAIT_S:
        state = client.request("GET", f"/api/documents/{doc['id']}")
        total = state.get("chunk_count") or 0
        progress.update(task, description=state["status"], total=total or None,
                        completed=state.get("memory_count") or 0)
        if state["status"] in ("done", "failed"):
            return state
        if state["status"] == "queued" and not nudged and time.monotonic() - started > QUEUED_GRACE_S:
            nudged = True  # no documents worker picked it up: ask the daemon to ingest it now
            client.request("POST", f"/api/documents/{doc['id']}/process", timeout=MAX_WAIT_S)
            continue
        time.sleep(POLL_S)
    fail(f"document {doc['id']} is still {state['status']} after {MAX_WAIT_S:.0f} s")
    return state


def _locally(kenning, body: dict, progress: Progress, task) -> dict:
    doc_id = kenning.submit_document(
        text=body.get("text"), url=body.get("url"), title=body.get("title"), project=body.get("project"),
        tags=body.get("tags"), content_type=body.get("content_type"), enqueue=False,
    )

    def note(stage: str, done: int, total: int) -> None:
        progress.update(task, description=stage, total=total or None, completed=done)

    try:
        kenning.ingest_document(doc_id, progress=note)
    except Exception as exc:
        kenning.mark_document_failed(doc_id, str(exc))
        raise
    return kenning.document(doc_id)


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
        if hasattr(b, "client"):
            state = _via_daemon(b.client, body, progress, task)
        else:
            state = _locally(b.kenning, body, progress, task)
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
