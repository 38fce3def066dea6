"""The edges (API, CLI, MCP, hooks) never hold the store: they call the facade (`kenning.service.Kenning`)
or, offline, `kenning.localstore.LocalStore` — never the database handle or a module that takes it.

An AST scan of their source: an attribute named like the handle (`.db`, `._db`, `.database`, the
facade's `._wiring`, a component's `.deps`), a read or write connection taken from it (`.reader()`, `.snapshot()`,
`.with_write_tx()`), or the functions that open one (`open_local_store`, `open_store`) each count as
one site. The import-linter contracts only see imports; this sees what is passed around.
"""

from __future__ import annotations

import ast
from pathlib import Path

import kenning

SRC = Path(kenning.__file__).parent
EDGES = ("api", "cli", "mcp", "hooks", "hookservice.py")
# `.deps`: a component's dependency bundle (SessionDeps, ObserverDeps, WorkerDeps) holds the store; an edge calls
# the component (`k.sessions.recovery.check_owner`), never builds one from its deps (`Recovery(k.sessions.deps)`)
HANDLE_ATTRS = {"db", "_db", "database", "_wiring", "deps"}
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
    Recovery(k.sessions.deps).check_owner("key", viewer)
'''
    found = sorted(what for _, what in handle_sites(source))
    assert found == sorted([".db", ".reader()", ".db", "._wiring", ".db", ".with_write_tx()",
                            "import open_local_store", "open_local_store", ".snapshot()", ".deps"])
    assert handle_sites("def route(k):\n    return k.code_impact('x', depth=2)\n") == []


# -- one door: no facade method merely forwards to a component the edges also call (README, layout) ---------------
SERVICE = SRC / "service.py"


def facade_components(service_source: str) -> set[str]:
    """The components the facade exposes: `self.X = w.X` in Kenning.__init__ (w: the wiring)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(service_source)):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute)
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "w"):
            found.update(t.attr for t in node.targets if isinstance(t, ast.Attribute))
    return found


def forwards(service_source: str) -> dict[str, str]:
    """{method: component} for each public Kenning method whose whole body (its docstring aside) is one call on a
    component: `return self.X.m(...)` or `self.X.m(...)`."""
    components = facade_components(service_source)
    found: dict[str, str] = {}
    for cls in ast.walk(ast.parse(service_source)):
        if not (isinstance(cls, ast.ClassDef) and cls.name == "Kenning"):
            continue
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef) or fn.name.startswith("_"):
                continue
            body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) != 1 or not isinstance(body[0], (ast.Return, ast.Expr)):
                continue
            call = body[0].value
            target = call.func if isinstance(call, ast.Call) else None
            while isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute):
                target = target.value
            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self" and target.attr in components):
                found[fn.name] = target.attr
    return found


def edge_calls(sources: list[str], components: set[str]) -> set[str]:
    """The components the edges call directly: `k.X.m` for a facade component X (any name but `self`)."""
    found: set[str] = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                    and isinstance(node.value.value, ast.Name) and node.value.value.id != "self"
                    and node.value.attr in components):
                found.add(node.value.attr)
    return found


def test_no_facade_method_forwards_to_a_component_the_edges_call():
    service = SERVICE.read_text(encoding="utf-8")
    components = facade_components(service)
    called = edge_calls([p.read_text(encoding="utf-8") for p in edge_files()], components)
    forwarded = forwards(service)
    # the scan sees both sides (a renamed wiring variable or a moved facade would make it vacuous)
    assert {"sessions", "hooks", "observer", "reads"} <= components
    assert {"sessions", "hooks", "observer"} <= called and "reads" not in called
    assert len(forwarded) >= 10 and set(forwarded.values()) >= {"reads"}
    assert {m: c for m, c in forwarded.items() if c in called} == {}


def test_the_forward_scan_finds_a_second_door():
    service = '''
class Kenning:
    def __init__(self, settings):
        w = wire(settings)
        self.sessions = w.sessions
        self.reads = w.reads

    def session_detail(self, key):
        """A second door to k.sessions.detail."""
        return self.sessions.detail(key)

    def end_session(self, key):
        self.sessions.recovery.end(key)

    def timeline(self, ident):
        return self.reads.timeline(ident)

    def composed(self, key):
        row = self.sessions.detail(key)
        return self.reads.timeline(row["id"])
'''
    edge = "def route(k, key):\n    return k.sessions.detail(key)\n"
    components = facade_components(service)
    assert components == {"sessions", "reads"}
    assert forwards(service) == {"session_detail": "sessions", "end_session": "sessions", "timeline": "reads"}
    called = edge_calls([edge, "def f(self):\n    return self.reads.x()\n"], components)
    assert called == {"sessions"}


def test_a_forward_planted_in_the_real_facade_is_found():
    service = SERVICE.read_text(encoding="utf-8")
    planted = service.replace("class Kenning:\n", "class Kenning:\n    def session_detail(self, key):\n"
                              "        return self.sessions.detail(key)\n\n", 1)
    called = edge_calls([p.read_text(encoding="utf-8") for p in edge_files()], facade_components(planted))
    assert {m: c for m, c in forwards(planted).items() if c in called} == {"session_detail": "sessions"}
