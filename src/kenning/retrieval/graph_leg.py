"""Knowledge-graph candidates and the graph boost (memory-pipeline-v2 "Knowledge Graph").

`graph_lookup` walks query tokens → entities (canonical-name match, ≤ 20 by mentions) →
one hop through relations (≤ 50 neighbours) → linked live memories (≤ 200). It is
deadline-bounded (checked after each step: past the deadline it returns what it has, with
`timed_out=True`) and fail-empty (any error ⇒ no candidates, the error is recorded). The
graph is always additive: recall without it is still correct.

Memory score = Σ over its linked entities of weight(entity) · mention confidence, where a
direct match weighs 1 and a neighbour weighs 0.5 · relation confidence, each divided by
log2(2 + entity mentions) so that popular entities count for less. Hub entities (mentioned by
more than 5 % of the linked memories, and by at least 20) are neither seeds nor neighbours:
they link nearly everything, so walking through them adds noise, not recall (measured on
LoCoMo, where every turn names its speaker).
"""

from __future__ import annotations

import math
import re
import time
from typing import TYPE_CHECKING

from kenning.core.text import STOP_WORDS
from kenning.core.telemetry import record_error, record_latency
from kenning.core.types import MemoryFilter
from kenning.retrieval.legs import GraphLookup, RecallContext
from kenning.store import graph as graph_store
from kenning.store.backend import Connection

if TYPE_CHECKING:
    from kenning.retrieval.fusion import FusedHit

_TOKEN = re.compile(r"[a-z0-9][a-z0-9+#._/-]*[a-z0-9+#]|[a-z0-9]{2,}")
ENTITY_LIMIT = 20
NEIGHBOR_LIMIT = 50
MEMORY_LIMIT = 200
NEIGHBOR_WEIGHT = 0.5
HUB_SHARE = 0.05  # an entity mentioned by more than this share of linked memories is a hub ...
HUB_MIN_MENTIONS = 20  # ... once it has at least this many mentions
LEG_MIN_RELATIVE = 0.5  # the leg keeps memories scoring at least half the best graph score ...
LEG_MAX = 20  # ... and at most this many: a long tail of weak links only dilutes fusion
CO_LOCATED_MIN = 2  # shared non-hub entities with the top results that make a hit "co-located"


def query_tokens(query: str) -> list[str]:
    """Lower-cased tokens of 2+ characters, stop words removed, plus adjacent word pairs
    (so "acme billing" can match a two-word entity)."""
    words = [w.strip("._/-") for w in _TOKEN.findall(query.lower())]
    words = [w for w in words if len(w) >= 2 and w not in STOP_WORDS]
    pairs = [f"{a} {b}" for a, b in zip(words, words[1:])]
    return list(dict.fromkeys(words + pairs))


def _idf(mentions: int) -> float:
    return 1.0 / math.log2(2 + max(0, mentions))


def hub_threshold(conn: Connection) -> int:
    """Mentions above which an entity counts as a hub for traversal and co-location."""
    return max(HUB_MIN_MENTIONS, int(HUB_SHARE * graph_store.linked_memory_count(conn)))


def graph_lookup(conn: Connection, query: str, *, filters: MemoryFilter | None = None,
                 deadline_ms: float = 500.0, limit: int = MEMORY_LIMIT) -> GraphLookup:
    """Traverse the graph for `query` within `deadline_ms`; never raises."""
    started = time.perf_counter()
    out = GraphLookup()

    def late() -> bool:
        if (time.perf_counter() - started) * 1000.0 > deadline_ms:
            out.timed_out = True
        return out.timed_out

    try:
        tokens = query_tokens(query)
        direct = graph_store.match_entities_by_tokens(conn, tokens, ENTITY_LIMIT) if tokens else []
        hub = hub_threshold(conn) if direct else 0
        direct = [e for e in direct if e["mentions"] <= hub]
        out.entities = [e["name"] for e in direct]
        if not direct or late():
            return out
        weights = {e["id"]: _idf(e["mentions"]) for e in direct}
        hops = [e for e in graph_store.neighbor_entities(conn, list(weights), NEIGHBOR_LIMIT) if e["mentions"] <= hub]
        out.neighbors = [e["name"] for e in hops]
        for e in hops:
            weights.setdefault(e["id"], NEIGHBOR_WEIGHT * float(e["confidence"]) * _idf(e["mentions"]))
        if late():
            return out
        links = graph_store.memories_for_entities(conn, list(weights), limit=limit, filters=filters)
        for link in links:
            gain = weights.get(link["entity_id"], 0.0) * float(link["confidence"])
            out.scores[link["memory_id"]] = out.scores.get(link["memory_id"], 0.0) + gain
        late()
        return out
    except Exception as exc:  # fail-empty: the graph is an optional, additive signal
        record_error("retrieval", f"graph lookup failed: {exc}", query=query[:200])
        return GraphLookup(error=f"{type(exc).__name__}: {exc}")
    finally:
        record_latency("graph_lookup", (time.perf_counter() - started) * 1000.0)


def cached_lookup(ctx: RecallContext) -> GraphLookup:
    """One graph traversal per recall, shared by the graph leg and the graph boost."""
    if ctx.graph_lookup is None:
        ctx.graph_lookup = graph_lookup(ctx.conn, ctx.query, filters=ctx.filters,
                                        deadline_ms=ctx.config.graph_deadline_ms, limit=MEMORY_LIMIT)
    return ctx.graph_lookup


def graph_leg(ctx: RecallContext) -> list[tuple[str, float]]:
    """Recall leg "graph": memories linked to entities the query names, best first.

    Only the strong part of the traversal enters fusion (≥ half the best graph score, ≤ 20):
    on LoCoMo conv-26 the whole 200-memory list cost 6.1 points of Recall@10 against hybrid,
    a 0.2 floor cost 1.0, the 0.5 floor 0.1. Memories reached only through a neighbour rarely
    pass the floor; they still get the graph boost's co-location lift.
    """
    ranked = cached_lookup(ctx).ranked()
    floor = LEG_MIN_RELATIVE * ranked[0][1] if ranked else 0.0
    return [(m, s) for m, s in ranked if s >= floor][: min(ctx.config.leg_limit, LEG_MAX)]


def graph_boost(ctx: RecallContext, hits: list[FusedHit], weight: float, anchors: int = 3) -> list[FusedHit]:
    """Post-fusion stage: lift graph-linked hits and hits sharing entities or related files
    with the top `anchors` results.

    v2 adds `boost_weight` (0.15) to a hybrid score normalized to [0, 1]. RRF scores are not
    normalized (≈ 1/(k+rank)), so the boost is scaled to the fused list's spread:
    gain = weight · (top − bottom) · strength, where strength is the memory's graph score
    relative to the best graph score (1.0 for the most connected memory); this part is skipped
    when the graph leg took part in fusion. A hit co-located with the top results (two shared
    non-hub entities, or a related file) gains half the weight.
    """
    if len(hits) < 2 or weight <= 0:
        return hits
    spread = max(h.score for h in hits) - min(h.score for h in hits)
    # With the graph leg in fusion its memories are already ranked there; boosting them again
    # double-counts the traversal (measured: −2.2 R@10 on LoCoMo), so only co-location applies.
    lookup = {} if "graph" in ctx.config.legs else cached_lookup(ctx).scores
    best = max(lookup.values(), default=0.0) or 1.0
    ids = [h.memory_id for h in hits]
    hub = hub_threshold(ctx.conn)
    entity_map = {m: {e for e, n in ents if n <= hub}
                  for m, ents in graph_store.entities_for_memories(ctx.conn, ids).items()}
    files = graph_store.related_files_for_memories(ctx.conn, ids)
    anchor_entities = set().union(*(entity_map.get(h.memory_id, set()) for h in hits[:anchors]))
    anchor_files = {f for h in hits[:anchors] for f in files.get(h.memory_id, [])}
    for i, hit in enumerate(hits):
        if hit.memory_id in lookup:
            hit.score += weight * spread * lookup[hit.memory_id] / best
            hit.reasons.append("graph:linked")
        elif i >= anchors and (len(anchor_entities & entity_map.get(hit.memory_id, set())) >= CO_LOCATED_MIN
                               or anchor_files & set(files.get(hit.memory_id, []))):
            hit.score += 0.5 * weight * spread
            hit.reasons.append("graph:co-located")
    return sorted(hits, key=lambda h: (-h.score, h.memory_id))
