"""The reverse-dependency closure behind impact analysis, bounded at `MAX_DEPTH` hops.

A row (anchor, node, depth, via, kind) says: `node` depends on `anchor` through `depth` hops of
calls / imports / imports_symbol / extends / implements, the first hop from `node` going to `via`.
Deeper questions continue breadth-first from the depth-`MAX_DEPTH` frontier at query time.

Incremental upkeep: an edge u→v can only change the closure of v itself and of the anchors
that already reach v within MAX_DEPTH - 1 hops, so only those anchors are recomputed.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Iterable

MAX_DEPTH = 3
FULL_REBUILD_ANCHORS = 4000

Adjacency = dict[int, list[tuple[int, str]]]   # dst → [(dependent src, edge kind)]


def reverse_adjacency(edges: Iterable[tuple[int, int, str]]) -> Adjacency:
    adj: Adjacency = defaultdict(list)
    for src, dst, kind in edges:
        if src != dst:
            adj[dst].append((src, kind))
    return adj


def bfs(anchor: int, dependents: Callable[[list[int]], Adjacency], max_depth: int = MAX_DEPTH,
        ) -> list[tuple[int, int, int, int, str]]:
    """Closure rows of one anchor: shortest-hop dependents within `max_depth`."""
    seen = {anchor}
    rows = []
    frontier = [anchor]
    for depth in range(1, max_depth + 1):
        adj = dependents(frontier)
        nxt = []
        for parent in frontier:
            for src, kind in adj.get(parent, ()):
                if src not in seen:
                    seen.add(src)
                    nxt.append(src)
                    rows.append((anchor, src, depth, parent, kind))
        if not nxt:
            break
        frontier = nxt
    return rows


def full_rows(edges: Iterable[tuple[int, int, str]], max_depth: int = MAX_DEPTH) -> list[tuple]:
    adj = reverse_adjacency(edges)
    lookup = lambda frontier: adj  # noqa: E731 - the whole adjacency is already in memory
    rows: list[tuple] = []
    for anchor in list(adj):
        rows += bfs(anchor, lookup, max_depth)
    return rows


def affected_anchors(changed: set[tuple[int, int, str]], reaching: Callable[[list[int], int], set[int]],
                     max_depth: int = MAX_DEPTH) -> set[int]:
    """Anchors whose closure may change when dependency edges `changed` (src, dst, kind) appear or vanish."""
    targets = sorted({dst for _, dst, _ in changed})
    if not targets:
        return set()
    return set(targets) | reaching(targets, max_depth - 1)
