"""m062 on both backends: the lifecycle's trust pass finds memories by access count through an
index of live memories, not by reading every memory (issue 36: 1.2 s and 2.0 s at a million memories
at each daemon start). What the pass does is pinned by tests/store/test_trust_promotion.py."""

from __future__ import annotations

from tests.store.plans import plan_of

QUERY = "SELECT id FROM memories WHERE is_deleted = 0 AND needs_review = 1 AND access_count >= 10"


def test_live_memories_by_access_count_come_from_the_index(db):
    assert "idx_memories_access" in plan_of(db, QUERY)
