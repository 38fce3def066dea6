"""The edges (API, CLI, MCP, hooks) never hold the store: they call the facade (`kenning.service.Kenning`)
or, offline, `kenning.localstore.LocalStore` — never the database handle or a module that takes it.

An AST scan of their source: an attribute named like the handle (`.db`, `._db`, `.database`, the
facade's `._wiring`), a read or write connection taken from it (`.reader()`, `.snapshot()`,
`.with_write_tx()`), or the functions that open one (`open_local_store`, `open_store`) each count as
one site. The import-linter contracts only see imports; this sees what is passed around.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kenning

SRC = Path(kenning.__file__).parent
EDGES = ("api", "cli", "mcp", "hooks", "hookservice.py")
HANDLE_ATTRS = {"db", "_db", "database", "_wiring"}
CONNECTION_CALLS = {"reader", "snapshot", "with_write_tx"}
OPENERS = {"open_local_store", "open_store", "StoreDatabase"}


def edge_files(src: Path = SRC) -> list[Path]:
    files: list[Path] = []
    for edge in EDGES:
        path = src / edge
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return files


def handle_sites(source: str) -> list[tuple[int, str]]:
    """(line, what) for each place this source touches the store handle."""
    sites: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in HANDLE_ATTRS:
            sites.append((node.lineno, f".{node.attr}"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in CONNECTION_CALLS):
            sites.append((node.lineno, f".{node.func.attr}()"))
        elif isinstance(node, ast.Name) and node.id in OPENERS:
            sites.append((node.lineno, node.id))
        elif isinstance(node, ast.ImportFrom):
            sites.extend((node.lineno, f"import {a.name}") for a in node.names if a.name in OPENERS)
    return sites


def all_sites(src: Path = SRC) -> list[str]:
    return [f"{path.relative_to(src)}:{line}: {what}"
            for path in edge_files(src) for line, what in handle_sites(path.read_text(encoding="utf-8"))]


def test_no_edge_module_touches_the_store_handle():
    assert len(edge_files()) > 40  # the scan sees the edges (a moved package would make it vacuous)
    assert all_sites() == []


def test_the_scan_finds_each_way_of_reaching_the_store():
    source = '''
from kenning.localstore import open_local_store
def route(k):
    impact(k.db.reader(), "x")
    build_timeline(k.db, "id")
    with k._wiring.db.with_write_tx() as conn: pass
    db = open_local_store(settings())
    views.projects(db.snapshot())
'''
    found = sorted(what for _, what in handle_sites(source))
    assert found == sorted([".db", ".reader()", ".db", "._wiring", ".db", ".with_write_tx()",
                            "import open_local_store", "open_local_store", ".snapshot()"])
    assert handle_sites("def route(k):\n    return k.code_impact('x', depth=2)\n") == []
