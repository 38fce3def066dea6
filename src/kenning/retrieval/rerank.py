"""Optional reranking of the fused head with a timeout (memory-pipeline-v2 "Optional Reranking").

The head (`top_n` hits) goes to a reranker; the tail is appended untouched. If the reranker
raises or takes longer than `timeout_ms`, the fused order is returned unchanged (no retry).

`EmbeddingReranker` (the default; no cross-encoder ships inside a PyPI package) blends
0.7 × normalized fused score + 0.3 × cosine(query, candidate) using the candidates' cached
embeddings; a candidate without a cached vector keeps its fused score. Database reads happen
in the caller's thread; only the scoring runs in the timed worker thread.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kenning.core.telemetry import log_event, record_error
from kenning.providers.embedding import EmbeddingProvider
from kenning.retrieval.fusion import FusedHit
from kenning.retrieval.legs import RecallContext
from kenning.store.backend import Connection
from kenning.store.memories import get_memories
from kenning.store.vectors import get_embeddings

ORIGINAL_WEIGHT = 0.7
COSINE_WEIGHT = 0.3
_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="kenning-rerank")


@dataclass
class RerankCandidate:
    memory_id: str
    score: float  # fused score normalized to [0, 1] over the head
    content: str
    vector: np.ndarray | None = None


RerankFn = Callable[[str, list[RerankCandidate]], list[tuple[str, float]]]


class EmbeddingReranker:
    """Cosine of the query vector against cached candidate vectors, blended with the fused score."""

    name = "embedding"

    def __init__(self, embedder: EmbeddingProvider) -> None:
        self.embedder = embedder

    def __call__(self, query: str, candidates: list[RerankCandidate]) -> list[tuple[str, float]]:
        query_vector = np.asarray(self.embedder.embed_query(query), dtype=np.float32)
        qnorm = float(np.linalg.norm(query_vector)) or 1.0
        scored = []
        for cand in candidates:
            if cand.vector is None:
                scored.append((cand.memory_id, cand.score))
                continue
            vec = np.asarray(cand.vector, dtype=np.float32)
            cosine = float(vec @ query_vector) / ((float(np.linalg.norm(vec)) or 1.0) * qnorm)
            scored.append((cand.memory_id, ORIGINAL_WEIGHT * cand.score + COSINE_WEIGHT * cosine))
        return sorted(scored, key=lambda kv: (-kv[1], kv[0]))


def rerank_hits(query: str, hits: list[FusedHit], candidates: list[RerankCandidate], reranker: RerankFn,
                *, top_n: int, timeout_ms: float) -> list[FusedHit]:
    """Reorder hits[:top_n] with `reranker` within `timeout_ms`; fall back to the fused order."""
    if len(hits) < 2 or top_n < 2:
        return hits
    head, tail = hits[:top_n], hits[top_n:]
    future = _POOL.submit(reranker, query, candidates)
    try:
        ranked = future.result(timeout=timeout_ms / 1000.0)
    except concurrent.futures.TimeoutError:
        future.cancel()
        log_event("retrieval", "rerank timed out; fused order kept", level="warning", timeout_ms=timeout_ms)
        return hits
    except Exception as exc:  # an optional refinement: keep the fused order
        record_error("retrieval", f"rerank failed: {exc}")
        return hits
    by_id = {h.memory_id: h for h in head}
    top = max(h.score for h in head) or 1.0
    out = []
    for memory_id, score in sorted(ranked, key=lambda kv: -kv[1]):
        hit = by_id.pop(memory_id, None)
        if hit is not None:
            hit.score = score * top
            hit.reasons.append("rerank")
            out.append(hit)
    out.extend(sorted(by_id.values(), key=lambda h: -h.score))  # anything the reranker dropped
    return out + tail


def build_candidates(conn: Connection, model_id: str, head: list[FusedHit]) -> list[RerankCandidate]:
    """Candidates for the head with their cached embeddings (read in the caller's thread)."""
    memories = get_memories(conn, [h.memory_id for h in head])
    vectors = get_embeddings(conn, list({m.content_hash for m in memories.values()}), model_id)
    top = max((h.score for h in head), default=1.0) or 1.0
    out = []
    for hit in head:
        memory = memories.get(hit.memory_id)
        if memory is not None:
            out.append(RerankCandidate(hit.memory_id, hit.score / top, memory.content,
                                       vectors.get(memory.content_hash)))
    return out


def rerank_stage(ctx: RecallContext, hits: list[FusedHit], *, top_n: int = 20, timeout_ms: float = 2000.0,
                 reranker: RerankFn | None = None) -> list[FusedHit]:
    """Post-fusion stage "rerank" (embedding reranker unless another is given)."""
    head = hits[:top_n]
    candidates = build_candidates(ctx.conn, ctx.embedder.model_id, head)
    return rerank_hits(ctx.query, hits, candidates, reranker or EmbeddingReranker(ctx.embedder),
                       top_n=top_n, timeout_ms=timeout_ms)
