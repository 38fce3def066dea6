"""`kenning import` and `kenning export`: memories in and out as JSON, JSONL, Markdown or a CLAUDE.md
(kenning.memory.portable), apart from the everyday memory commands so those never load the parsers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from kenning.cli.backend import LocalBackend
from kenning.cli.context import console, fail, settings
from kenning.cli.memory import backend
from kenning.core.errors import KenningError
from kenning.memory import portable

IMPORT_BATCH = 2000  # records per /api/memory/batch request (the route takes up to 5000)


def _import_records(path: Path, fmt: str | None, project: str | None) -> list[dict]:
    """Parse and validate EVERY record before anything is stored; the error names the line or item."""
    from pydantic import ValidationError

    from kenning.api.schemas import RememberIn
    from kenning.memory.write import validate_draft

    cfg = settings()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        fail(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); nothing was imported", code=2)
    try:
        records = portable.parse(text, fmt or portable.detect_format(path.name, text))
    except KenningError as exc:
        fail(f"{path}:{exc}; nothing was imported", code=2)
    for record in records:
        if project is not None and record.body.get("project") is None:
            record.body["project"] = project
        where = f"{path}:{record.where}"
        try:
            validate_draft(RememberIn(**record.body).to_draft(), cfg.recall.max_content_chars, cfg.secrets)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'line'}: {e['msg']}" for e in exc.errors())
            fail(f"{where}: {problems}; nothing was imported", code=2)
        except KenningError as exc:
            fail(f"{where}: {exc}; nothing was imported", code=2)
    return [record.body for record in records]


def import_(
    path: Path = typer.Argument(..., exists=True, dir_okay=False, readable=True,
                                help="JSONL or JSON (a kenning export or remember bodies), CLAUDE.md, AGENTS.md, "
                                     ".cursorrules or other Markdown."),
    format: Optional[str] = typer.Option(
        None, "--format", "-f", help=f"Force the format: {', '.join(portable.IMPORT_FORMATS)}. "
                                     "Default: from the file name, else the content."),
    project: Optional[str] = typer.Option(None, "--project", "-p",
                                          help="Project for the records that name none (a CLAUDE.md's rules)."),
) -> None:
    """Import memories, all or nothing: every record is validated before any is stored.

    Memories that carry an id (kenning exports) keep it, and an id already stored is skipped, as is
    an exact duplicate, so importing a file twice stores nothing new. The local store takes the whole
    file in one transaction; through the daemon, batches of up to IMPORT_BATCH go to
    /api/memory/batch (each atomic). Should the daemon fail part way (disk full, stopped), the error
    says how many records were stored and where to resume.
    """
    if format is not None and format not in portable.IMPORT_FORMATS:
        fail(f"unknown format {format!r}: use one of {', '.join(portable.IMPORT_FORMATS)}", code=2)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    records = _import_records(path, format, project)
    stored = deduped = done = 0
    with backend() as b, Progress(TextColumn("importing"), BarColumn(), MofNCompleteColumn(),
                                  TimeRemainingColumn(), console=console) as progress:
        task = progress.add_task("import", total=len(records))
        batch = len(records) if isinstance(b, LocalBackend) else IMPORT_BATCH
        for start in range(0, len(records), max(batch, 1)):
            try:
                results = b.remember_batch(records[start:start + batch])
            except KenningError as exc:
                if done:
                    fail(f"{path}: stored the first {done} of {len(records)} records, then failed: {exc}; "
                         f"re-run with the remaining records (duplicates are skipped)", code=1)
                raise
            done += len(results)
            deduped += sum(r["deduped"] for r in results)
            stored += sum(not r["deduped"] for r in results)
            progress.advance(task, len(results))
    console.print(f"imported {stored} memories ({deduped} duplicates skipped)")


def export(
    out: Path = typer.Option(..., "--out", "-o", help="File to write ('-' for standard output)."),
    format: str = typer.Option("json", "--format", "-f", help=", ".join(portable.EXPORT_FORMATS) + "."),
    project: Optional[str] = typer.Option(None, "--project", "-p"),
) -> None:
    """Export live memories as JSON, JSONL, Markdown or a CLAUDE.md; `kenning import` reads each back.

    claude-md puts constraints and decisions first, one section per type, each memory's id in an
    HTML comment under it (re-importing skips what is already stored). The file is written whole
    or not at all.
    """
    if format not in portable.EXPORT_FORMATS:
        fail(f"unknown format {format!r}: use one of {', '.join(portable.EXPORT_FORMATS)}", code=2)
    if str(out) == "-":
        with backend() as b:
            for chunk in b.export(format, project):
                sys.stdout.write(chunk)
        return
    partial = out.with_name(out.name + ".part")
    try:
        with backend() as b, partial.open("w", encoding="utf-8") as handle:
            for chunk in b.export(format, project):
                handle.write(chunk)
        partial.replace(out)
    finally:
        partial.unlink(missing_ok=True)
    count = len(portable.parse(out.read_text(encoding="utf-8"), format))
    console.print(f"wrote {count} memories to {out}")


def register(app: typer.Typer) -> None:
    app.command("import")(import_)
    app.command("export")(export)
