"""The vector leg on its own thread and reader (issue 36, both backends) answers exactly what the legs answer
one after the other: same hits, same order, same scores and legs, on a real store and the real model."""

from __future__ import annotations

import threading

from kenning.core.types import MemoryDraft, MemoryFilter
from kenning.retrieval.config import preset
from kenning.retrieval.recall import recall

TEXTS = [
    "The billing worker retries forever on expired tokens; we added a guard.",
    "Pinned the Kafka consumer to v2.3 because of duplicate events.",
    "The auth middleware fails when a payload is empty.",
    "Use pnpm, not npm, in the dashboard repo.",
    "The nightly export job times out if the disk is full.",
    "Alice owns the rate limiter; ask her before changing its window.",
    "Our CI pipeline is slow because the Docker cache is cold.",
    "The PDF renderer leaks memory during large uploads.",
] * 3
QUERIES = ["why does the auth middleware fail", "who owns the rate limiter", "kafka duplicate events",
           "what package manager do we use", "slow builds"]


def _view(hits):
    return [(h.memory.id, round(h.score, 12), h.legs, h.reasons, h.sources) for h in hits]


def test_the_vector_leg_on_its_own_thread_gives_the_sequential_answer(kenning):
    kenning.remember_many([MemoryDraft(content=f"{t} ({i})", project="p" if i % 2 else None,
                                       created_at=f"2026-03-{1 + i % 28:02d}T10:00:00Z")
                           for i, t in enumerate(TEXTS)])
    conn = kenning.db.reader()
    readers: list[threading.Thread] = []

    def reader():
        readers.append(threading.current_thread())
        return kenning.db.reader()

    for name in ("hybrid", "default"):
        config = kenning.recall_config(name)
        for query in QUERIES:
            for filters in (None, MemoryFilter(project="p")):
                one_by_one = recall(conn, kenning.embedder, query, limit=10, filters=filters, config=config)
                side_by_side = recall(conn, kenning.embedder, query, limit=10, filters=filters, config=config,
                                      reader=reader)
                assert _view(side_by_side) == _view(one_by_one), (name, query, filters)
                assert side_by_side.bm25_matches == one_by_one.bm25_matches
                assert one_by_one and any(h.legs.get("vector") for h in one_by_one)
    assert readers and all(t is not threading.current_thread() for t in readers)
    # one leg alone runs here, on the caller's reader
    readers.clear()
    alone = recall(conn, kenning.embedder, QUERIES[0], limit=5, config=preset("dense"), reader=reader)
    assert alone and not readers
