"""Module boundaries from the code graph (memory-system-v4 "Module Boundary Detection"):
Louvain communities of the file dependency graph (imports, calls, extends… between files,
weighted by edge count, undirected), with a fixed seed so answers are stable. The answer
carries its modularity next to the modularity of the plain directory partition (each file in
its top-level directory) — the baseline a community method has to beat to be worth using.
A module's label is its files' longest common directory; `scope_hint` names the module of
a set of files, for memory scoping.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from typing import TYPE_CHECKING

from kenning.store import codegraph as store
from kenning.store.backend import Connection

if TYPE_CHECKING:  # networkx is imported where a graph is built: the daemon's start-up never needs it
    import networkx as nx

SEED = 42


def _graph(conn: Connection, project: str) -> nx.Graph:
    import networkx as nx

    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(store.project_paths(conn, project))
    for src, dst, count in store.file_dependency_pairs(conn, project):
        weight = graph[src][dst]["weight"] + count if graph.has_edge(src, dst) else count
        graph.add_edge(src, dst, weight=weight)
    return graph


def _label(files: list[str]) -> str:
    common = posixpath.commonpath(files) if len(files) > 1 else posixpath.dirname(files[0])
    if common and common not in files:
        return common
    tops = Counter(f.split("/", 1)[0] if "/" in f else "." for f in files)
    return tops.most_common(1)[0][0]


def _directory_partition(files: list[str]) -> list[set[str]]:
    groups: dict[str, set[str]] = {}
    for f in files:
        parts = f.split("/")
        groups.setdefault("/".join(parts[:2]) if len(parts) > 2 else parts[0] if len(parts) > 1 else ".", set()).add(f)
    return list(groups.values())


def module_boundaries(conn: Connection, project: str, *, resolution: float = 1.0) -> dict:
    graph = _graph(conn, project)
    if graph.number_of_nodes() == 0:
        return {"project": project, "modularity": None, "directory_modularity": None, "modules": []}
    if graph.number_of_edges() == 0:
        communities = [{n} for n in graph.nodes]
        modularity = directory = 0.0
    else:
        import networkx as nx

        communities = nx.community.louvain_communities(graph, weight="weight", resolution=resolution, seed=SEED)
        modularity = nx.community.modularity(graph, communities, weight="weight")
        directory = nx.community.modularity(graph, _directory_partition(list(graph.nodes)), weight="weight")
    modules = []
    for i, files in enumerate(sorted(communities, key=lambda c: (-len(c), sorted(c)[0]))):
        ordered = sorted(files)
        modules.append({"id": i, "label": _label(ordered), "size": len(ordered), "files": ordered})
    return {"project": project, "modularity": round(modularity, 4), "directory_modularity": round(directory, 4),
            "modules": modules}


def scope_hint(conn: Connection, project: str, files: list[str]) -> str | None:
    """The label of the module most of `files` belong to (None when none is indexed)."""
    wanted = set(files)
    best = None
    for module in module_boundaries(conn, project)["modules"]:
        hits = len(wanted & set(module["files"]))
        if hits and (best is None or hits > best[0]):
            best = (hits, module["label"])
    return best[1] if best else None
