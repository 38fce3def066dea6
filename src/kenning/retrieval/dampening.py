"""Post-fusion dampening (memory-pipeline-v2 "Post-Fusion Dampening").

Three independent corrections that break score bunching after fusion, then a re-sort:

1. gravity — a hit that came only through a semantic path (vector or graph, no BM25 match)
   with a normalized score above 0.3 but sharing no query term with its content is a likely
   "semantic hallucination": score × gravity_penalty (0.5).
2. hub — a hit that came through graph traversal and whose linked entities are all above the
   P(hub_percentile) entity mention count is about popular entities only: score × hub_penalty
   (0.7). Hits found by BM25 or vectors alone are not judged by entity popularity: on LoCoMo,
   penalising them cost 2.9 points of Recall@10 (every turn names its hub speaker).
3. resolution — constraint/decision memories × resolution_boost (1.2); other memories with a
   temporal anchor (ISO date or month name) × (1 + (boost − 1) · 0.5); content under 50
   characters gets no boost.

Scores are normalized by the top fused score for the 0.3 threshold only; the multipliers
apply to the fused score itself.
"""

from __future__ import annotations

import re

from kenning.core.text import STOP_WORDS, word_tokens
from kenning.retrieval.extras_config import DampeningParams
from kenning.retrieval.fusion import FusedHit
from kenning.retrieval.legs import RecallContext
from kenning.store import graph as graph_store
from kenning.store.memories import get_memories

SEMANTIC_LEGS = frozenset({"vector", "graph"})
GRAVITY_MIN_SCORE = 0.3
RESOLUTION_MIN_CHARS = 50
_TEMPORAL = re.compile(  # ISO dates and capitalized month names ("May" only next to a number)
    r"\b\d{4}-\d{2}-\d{2}\b|\b(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|June?|July?|"
    r"Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\b"
    r"|\b\d{1,2}\s+May\b|\bMay\s+\d{1,4}\b",
)


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_terms(text: str) -> set[str]:
    """Lower-cased, stop-word-stripped, lightly stemmed word set."""
    return {_stem(w) for w in word_tokens(text) if w not in STOP_WORDS and len(w) > 1}


def gravity_factor(query_terms: set[str], content: str, legs: set[str], normalized: float,
                   params: DampeningParams) -> float:
    if not params.gravity_enabled or "bm25" in legs or not (legs & SEMANTIC_LEGS):
        return 1.0
    if normalized <= GRAVITY_MIN_SCORE or not query_terms:
        return 1.0
    return params.gravity_penalty if not (query_terms & content_terms(content)) else 1.0


def hub_factor(entity_mentions: list[int], threshold: int | None, params: DampeningParams) -> float:
    if not params.hub_enabled or threshold is None or not entity_mentions:
        return 1.0
    return params.hub_penalty if all(m > threshold for m in entity_mentions) else 1.0


def resolution_factor(memory_type: str, content: str, params: DampeningParams) -> float:
    if not params.resolution_enabled or len(content) < RESOLUTION_MIN_CHARS:
        return 1.0
    if memory_type in ("constraint", "decision"):
        return params.resolution_boost
    if _TEMPORAL.search(content):
        return 1.0 + (params.resolution_boost - 1.0) * 0.5
    return 1.0


def dampen(ctx: RecallContext, hits: list[FusedHit], params: DampeningParams = DampeningParams()) -> list[FusedHit]:
    """Post-fusion stage: apply gravity, hub and resolution, then re-sort by score."""
    if not hits:
        return hits
    ids = [h.memory_id for h in hits]
    memories = get_memories(ctx.conn, ids)
    entity_map = graph_store.entities_for_memories(ctx.conn, ids) if params.hub_enabled else {}
    threshold = graph_store.mention_percentile(ctx.conn, params.hub_percentile) if params.hub_enabled else None
    query_terms = content_terms(ctx.query)
    top = max(h.score for h in hits) or 1.0
    for hit in hits:
        memory = memories.get(hit.memory_id)
        if memory is None:
            continue
        factors = (
            ("gravity", gravity_factor(query_terms, memory.content, set(hit.legs), hit.score / top, params)),
            ("hub", hub_factor([m for _, m in entity_map.get(hit.memory_id, [])], threshold, params)
             if "graph" in hit.legs else 1.0),
            ("resolution", resolution_factor(memory.type, memory.content, params)),
        )
        for name, factor in factors:
            if factor != 1.0:
                hit.score *= factor
                hit.reasons.append(f"{name}:x{factor:g}")
    return sorted(hits, key=lambda h: (-h.score, h.memory_id))
