"""`kenning code …`: index a repository into the code graph and ask what a change would break.

`index` always runs in this process (parsing is local CPU work; it writes the shared SQLite
file in short transactions, so a running daemon sees the result at once). `impact` and
`status` ask the daemon when it runs and read the store directly otherwise — neither loads the
embedding model.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Optional, cast

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.tree import Tree

from kenning.cli.context import console, fail, print_json, settings
from kenning.client import KenningClient
from kenning.core.errors import InvalidInput
from kenning.core.limits import check_path
from kenning.hooks.claude_code import project_of

if TYPE_CHECKING:
    from kenning.codegraph.impact import ImpactReport
    from kenning.localstore import LocalStore

# The code graph's projects and modules (the daemon's JSON, or the same built here: codegraph declares no
# TypedDicts for them) are printed as read, without checks: a missing key fails as it always did.
Json = dict[str, Any]

code_app = typer.Typer(no_args_is_help=True, help="Code graph: index a repository, impact of a change.")


@contextmanager
def _reader() -> Iterator[tuple[KenningClient | None, "LocalStore | None"]]:
    """(daemon client, None) when the daemon is up, else (None, the store opened here)."""
    s = settings()
    client = KenningClient(s.base_url, token=s.auth_token, timeout=60.0)
    if client.is_up():
        try:
            yield client, None
        finally:
            client.close()
        return
    client.close()
    from kenning.localstore import LocalStore

    store = LocalStore(s)
    try:
        yield None, store
    finally:
        store.close()


@code_app.command("index")
def index(
    path: Path = typer.Argument(Path("."), help="Repository root to index (default: here)."),
    project: Optional[str] = typer.Option(None, "--project", "-p", help="Project name (default: the git root's name)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Index (or bring up to date) the source files under PATH, honouring .gitignore."""
    from kenning.localstore import LocalStore

    try:
        check_path("path", str(path))  # before resolve(): too long a path is one line and exit 2, not a traceback
    except InvalidInput as exc:
        fail(str(exc), code=2)
    root = path.expanduser().resolve()
    if not root.is_dir():
        fail(f"{path}: not a directory", code=2)
    name = project or project_of(str(root)) or root.name
    columns = (TextColumn("{task.description:>8}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    store = LocalStore(settings())
    try:
        with Progress(*columns, console=console, transient=True, disable=as_json) as progress:
            tasks: dict[str, TaskID] = {}

            def note(phase: str, done: int, total: int) -> None:
                if phase not in tasks:
                    tasks[phase] = progress.add_task(phase, total=total)
                progress.update(tasks[phase], completed=done, total=total)

            report = store.code_index(root, name, progress=note)
    finally:
        store.close()
    if as_json:
        print_json(report.to_dict())
        return
    console.print(f"[bold]{report.project}[/bold] {report.root}: {report.files} files, {report.parsed} parsed, "
                  f"{report.unchanged} unchanged, {report.removed} removed, closure {report.closure} "
                  f"in {report.seconds:.1f} s")
    for where in report.syntax_errors[:20]:
        console.print(f"  [yellow]syntax error[/yellow] {where} (the rest of the file was indexed)")


@code_app.command("impact")
def impact(
    target: str = typer.Argument(..., help="path, path:symbol or a dotted name (pkg.mod.func)."),
    project: Optional[str] = typer.Option(None, "--project", "-p", help="Indexed project (default: the only one, or the one around here)."),
    depth: int = typer.Option(3, "--depth", "-d", min=1, max=10, help="How many hops of dependents."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """What depends on TARGET (directly and transitively), the tests that cover it, linked memories."""
    with _reader() as (client, store):
        if client is not None:
            params: dict[str, str | int] = {"target": target, "depth": depth, "cwd": str(Path.cwd())}
            params |= {"project": project} if project else {}
            data = cast("ImpactReport", client.request("GET", "/api/code/impact", params=params))
        else:
            assert store is not None
            data = store.code_impact(target, project=project, depth=depth, cwd=str(Path.cwd()))
    if as_json:
        print_json(data)
        return
    tree = Tree(f"[bold]{data['target']}[/bold] ({data['project']}, depth {data['depth']}, {data['took_ms']} ms)")
    deps = tree.add(f"dependents ({len(data['dependents'])})")
    for d in data["dependents"]:
        deps.add(f"{d['depth']} {d['edge']:<14} {' → '.join(d['chain'])}")
    tests = tree.add(f"tests ({len(data['tests'])})")
    for t in data["tests"]:
        tests.add(f"{t['path']}:{t['symbol']}" if t["symbol"] else t["path"])
    mems = tree.add(f"memories ({len(data['memories'])})")
    for m in data["memories"]:
        mems.add(f"{m['id']} [{m['type']}] {m['content'][:100]}  ({m['linked_to']})")
    if data["stale_files"]:
        tree.add("[yellow]being re-indexed:[/yellow] " + ", ".join(data["stale_files"]))
    console.print(tree)


@code_app.command("status")
def status(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Indexed projects with file, node, edge and closure counts."""
    with _reader() as (client, store):
        if client is not None:
            data = cast(Json, client.request("GET", "/api/code/projects"))
        else:
            assert store is not None
            data = cast(Json, store.code_projects())
    if as_json:
        print_json(data)
        return
    table = Table("project", "root", "files", "nodes", "edges", "closure", "indexed at")
    for p in data["projects"]:
        table.add_row(p["project"], p["root"], str(p["files"]), str(p["nodes"]),
                      str(sum(p["edges"].values())), str(p["closure_rows"]), p["indexed_at"] or "-")
    console.print(table)


@code_app.command("modules")
def modules(
    project: Optional[str] = typer.Option(None, "--project", "-p", help="Indexed project (default: the only one, or the one around here)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Module boundaries: communities of the import/call graph between files (Louvain)."""
    with _reader() as (client, store):
        if client is not None:
            if project is None:
                fail("pass --project when the daemon is running", code=2)
            data = cast(Json, client.request("GET", "/api/code/modules", params={"project": project}))
        else:
            assert store is not None
            data = cast(Json, store.code_modules(project, cwd=str(Path.cwd())))
    if as_json:
        print_json(data)
        return
    console.print(f"[bold]{data['project']}[/bold]: {len(data['modules'])} modules, modularity "
                  f"{data['modularity']} (directories: {data['directory_modularity']})")
    table = Table("id", "label", "files", "examples")
    for m in data["modules"][:50]:
        table.add_row(str(m["id"]), m["label"], str(m["size"]), ", ".join(m["files"][:3]))
    console.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(code_app, name="code")
