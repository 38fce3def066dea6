"""Code-neighbourhood boost (SPEC S8): memories attached to the code a query names — or to
that code's callers, importers and dependencies — rank higher.

The query's file paths and unambiguous symbols are found in the project's code index
(`codegraph.links.mentions`); memories linked to those files or their neighbourhood get
`weight * decay**distance * top score` added (distance 0 for the named files), and join the
candidates when no leg found them. Off by default: it is a stage (`code_neighbourhood`,
preset `code`) until a benchmark shows it helps (see docs / issue 15's closing note).
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.codegraph.links import mentions, neighbourhood_memories
from kenning.retrieval.fusion import FusedHit
from kenning.retrieval.legs import RecallContext
from kenning.store import codegraph as code_store


@dataclass(frozen=True)
class CodeNeighbourhoodParams:
    weight: float = 1.0   # not tuned: no benchmark here has code-linked memories (see issue 15 note)
    decay: float = 0.5
    depth: int = 1
    limit: int = 20


def code_neighbourhood(ctx: RecallContext, hits: list[FusedHit], p: CodeNeighbourhoodParams = CodeNeighbourhoodParams()
                       ) -> list[FusedHit]:
    projects = code_store.indexed_projects(ctx.conn)
    project = ctx.filters.project if ctx.filters.project in projects else (projects[0] if len(projects) == 1 else None)
    if project is None or p.weight <= 0:
        return hits
    files = sorted({path for path, _, _ in mentions(ctx.conn, project, ctx.query)})
    if not files:
        return hits
    linked = neighbourhood_memories(ctx.conn, files, project=project, depth=p.depth, limit=p.limit)["memories"]
    top = hits[0].score if hits else 1.0
    by_id = {h.memory_id: h for h in hits}
    for item in linked:
        extra = p.weight * p.decay ** item["distance"] * top
        hit = by_id.get(item["id"])
        if hit is None:
            hit = by_id[item["id"]] = FusedHit(item["id"], 0.0)
        hit.score += extra
        hit.reasons.append(f"code:{item['linked_to']}")
    return sorted(by_id.values(), key=lambda h: -h.score)
