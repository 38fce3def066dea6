""""What breaks if I change X": a target's direct and transitive dependents with depth and
path, the tests among them, and the memories linked to any of them.

TARGET is `path`, `path:symbol` or a dotted name (`pkg.mod` / `pkg.mod.Class.method`), paths
relative to the indexed root. Answers come from the closure table (≤ closure.MAX_DEPTH hops)
and continue breadth-first over fresh edges beyond it. A dependent whose own file is being
re-indexed (stale) is left out together with everything reached through it, so one answer
never mixes stale and fresh edges; its file is listed under `stale_files`.
"""

from __future__ import annotations

import time
from typing import TypedDict

from kenning.codegraph import closure
from kenning.core.errors import InvalidInput, NotFound
from kenning.store import codegraph as store
from kenning.store.backend import Connection

MAX_DEPTH = 10


def choose_project(conn: Connection, project: str | None, cwd: str | None = None) -> str:
    """The project asked for; else the only one indexed; else the one whose root holds `cwd`."""
    projects = store.list_projects(conn)
    if project:
        if not any(p["project"] == project for p in projects):
            raise NotFound(f"project {project!r} has no code index; run `kenning code index --project {project}`")
        return project
    if len(projects) == 1:
        return projects[0]["project"]
    if cwd:
        inside = [p for p in projects if cwd == p["root"] or cwd.startswith(p["root"].rstrip("/") + "/")]
        if inside:
            return max(inside, key=lambda p: len(p["root"]))["project"]
    if not projects:
        raise NotFound("nothing is indexed yet; run `kenning code index PATH`")
    raise InvalidInput("several projects are indexed; pass --project (one of: "
                       + ", ".join(p["project"] for p in projects) + ")")


def resolve_target(conn: Connection, project: str, target: str) -> list[store.CodeNode]:
    """The nodes a TARGET names (a file: all its nodes; a class: it and its members)."""
    target = target.strip()
    if not target:
        raise InvalidInput("target must not be empty")
    path, _, symbol = target.partition(":")
    path = path.removeprefix("./")
    found = store.file_by_path(conn, project, path)
    if found is not None:
        nodes = store.file_nodes(conn, found["id"], symbol or None)
        if not nodes:
            raise NotFound(f"no symbol {symbol!r} in {path}")
        return nodes
    if symbol:
        raise NotFound(f"no indexed file {path!r} in project {project!r}")
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        for f in store.files_by_module(conn, project, ".".join(parts[:cut])):
            rest = ".".join(parts[cut:])
            nodes = store.file_nodes(conn, f["id"], rest or None)
            if nodes:
                return nodes
    named = store.nodes_named(conn, project, parts[-1])
    if len(named) == 1:
        return store.file_nodes(conn, named[0]["file_id"], named[0]["qualname"])
    if named:
        options = ", ".join(f"{n['path']}:{n['qualname']}" for n in named[:5])
        raise InvalidInput(f"{target!r} is ambiguous: {options}")
    raise NotFound(f"no file, module or symbol {target!r} in project {project!r}")


class ImpactNode(TypedDict):
    path: str
    symbol: str | None
    kind: str
    line: int | None


class Dependent(TypedDict):
    """A file or symbol that depends on the target, `depth` edges away, with the chain that links them."""

    path: str
    symbol: str | None
    kind: str
    line: int | None
    depth: int
    edge: str
    chain: list[str]


class LinkedMemory(TypedDict):
    id: str
    type: str
    content: str
    linked_to: str
    reason: str


class ImpactReport(TypedDict):
    """`kenning code impact`: the target's nodes, what depends on it (tests apart), the memories linked
    to those files, the stale files on the way."""

    project: str
    target: str
    depth: int
    nodes: list[ImpactNode]
    dependents: list[Dependent]
    tests: list[Dependent]
    memories: list[LinkedMemory]
    stale_files: list[str]
    took_ms: float


def _label(row: store.ClosureRow | store.NodeInfo) -> str:
    return f"{row['path']}:{row['qualname']}" if row["qualname"] else row["path"]


def impact(conn: Connection, target: str, *, project: str | None = None, depth: int = 3, cwd: str | None = None,
           memory_limit: int = 20) -> ImpactReport:
    started = time.perf_counter()
    if not 1 <= depth <= MAX_DEPTH:
        raise InvalidInput(f"depth must be between 1 and {MAX_DEPTH}")
    project = choose_project(conn, project, cwd)
    seeds = resolve_target(conn, project, target)
    seed_ids = [n["id"] for n in seeds]
    rows = store.closure_rows(conn, seed_ids, min(depth, closure.MAX_DEPTH))
    if depth > closure.MAX_DEPTH:
        rows += _beyond(conn, rows, seed_ids, depth)
    best: dict[int, store.ClosureRow] = {}
    for row in sorted(rows, key=lambda r: r["depth"]):
        if row["node"] not in best and row["node"] not in seed_ids:
            best[row["node"]] = row
    seed_rows = _seed_rows(conn, seed_ids)
    seed_info = {n["id"]: n for n in seed_rows}
    stale = sorted({r["path"] for r in best.values() if r["stale_at"]})
    fresh = _drop_stale(best, seed_ids)
    dependents: list[Dependent] = []
    tests: list[Dependent] = []
    for row in sorted(fresh.values(), key=lambda r: (r["depth"], r["path"], r["qualname"])):
        item: Dependent = {"path": row["path"], "symbol": row["qualname"], "kind": row["node_kind"],
                "line": row["start_line"], "depth": row["depth"], "edge": row["kind"],
                "chain": _chain(row, fresh, seed_info)}
        (tests if row["is_test"] else dependents).append(item)
    paths = sorted({n["path"] for n in seed_rows} | {r["path"] for r in fresh.values()})
    memories: list[LinkedMemory] = [{"id": m["memory_id"], "type": m["type"], "content": m["content"][:300],
                 "linked_to": f"{m['path']}:{m['symbol']}" if m["symbol"] else m["path"], "reason": m["reason"]}
                for m in store.memories_linked(conn, project, paths, memory_limit)]
    return {
        "project": project, "target": target, "depth": depth,
        "nodes": [{"path": n["path"], "symbol": n["qualname"], "kind": n["kind"], "line": n["start_line"]}
                  for n in seed_rows],
        "dependents": dependents, "tests": tests, "memories": memories, "stale_files": stale,
        "took_ms": round((time.perf_counter() - started) * 1000, 2),
    }


def _seed_rows(conn: Connection, seed_ids: list[int]) -> list[store.NodeInfo]:
    return sorted(store.nodes_info(conn, seed_ids), key=lambda n: (n["path"], n["qualname"]))


def _drop_stale(best: dict[int, store.ClosureRow], seed_ids: list[int]) -> dict[int, store.ClosureRow]:
    """Keep rows whose whole chain back to a seed runs through fresh files."""
    seeds = set(seed_ids)
    ok: dict[int, bool] = {}

    def fresh(node: int, hops: int = 0) -> bool:
        if node in seeds:
            return True
        if node in ok:
            return ok[node]
        row = best.get(node)
        ok[node] = row is not None and not row["stale_at"] and hops <= MAX_DEPTH and fresh(row["via"], hops + 1)
        return ok[node]

    return {node: row for node, row in best.items() if fresh(node)}


def _chain(row: store.ClosureRow, rows: dict[int, store.ClosureRow], seeds: dict[int, store.NodeInfo]) -> list[str]:
    """dependent → … → target, as path:symbol labels."""
    chain = [_label(row)]
    node = row["via"]
    while node not in seeds and node in rows and len(chain) <= MAX_DEPTH:
        chain.append(_label(rows[node]))
        node = rows[node]["via"]
    if node in seeds:
        chain.append(_label(seeds[node]))
    return chain


def _beyond(conn: Connection, rows: list[store.ClosureRow], seed_ids: list[int], depth: int) -> list[store.ClosureRow]:
    """Breadth-first past the closure's depth over fresh edges (the lazy part of the closure)."""
    seen = set(seed_ids) | {r["node"] for r in rows}
    frontier = [r["node"] for r in rows if r["depth"] == closure.MAX_DEPTH]
    extra: list[store.ClosureRow] = []
    for level in range(closure.MAX_DEPTH + 1, depth + 1):
        edges = [(s, d, k) for s, d, k in store.dependents_of(conn, frontier) if s not in seen]
        if not edges:
            break
        info = {n["id"]: n for n in store.nodes_info(conn, sorted({s for s, _, _ in edges}))}
        frontier = []
        for src, dst, kind in edges:
            if src in seen or src not in info:
                continue
            seen.add(src)
            frontier.append(src)
            n = info[src]
            extra.append({"anchor": None, "node": src, "depth": level, "via": dst, "kind": kind,
                          "node_kind": n["kind"], "qualname": n["qualname"], "start_line": n["start_line"],
                          "path": n["path"], "is_test": n["is_test"], "stale_at": n["stale_at"]})
    return extra
