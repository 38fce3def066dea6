"""m061 on both backends: the rated candidate rows (agent_feedback_count > 0) in their own partial
index, which session start's standing candidates read for "rated useful at least once" — on
PostgreSQL that test had hashed every session_memories row at each session start (issue 36)."""

from __future__ import annotations

from kenning.core.clock import now_iso
from kenning.core.types import MemoryDraft
from kenning.store import memories as store
from kenning.store.ranking import standing_candidates
from tests.store.plans import plan_of

RATED = ("SELECT 1 FROM session_memories sm WHERE sm.memory_id = 'x'"
         " AND sm.agent_feedback_count > 0 AND sm.agent_relevance_score >= 0.5")


def _candidates(db, project: str) -> list[str]:
    return standing_candidates(db.reader(), project=project, at=now_iso(), viewer=None, min_confidence=0.99,
                               useful_rating=0.5, raw_types=["episode"], raw_sources=["git"], limit=10)


def test_a_memory_rated_useful_stands_and_one_rated_low_or_unrated_does_not(db):
    with db.with_write_tx() as conn:
        ids = [store.insert_memory(conn, MemoryDraft(content=f"deploy note {i}", project="p", confidence=0.5))[0]
               for i in range(3)]
        conn.execute("INSERT INTO sessions(session_key, started_at) VALUES ('s1', ?)", (now_iso(),))
        for memory_id, ratings, score in zip(ids, (2, 1, 0), (0.9, 0.1, None)):
            conn.execute("INSERT INTO session_memories(id, session_key, memory_id, source, agent_feedback_count,"
                         " agent_relevance_score, final_score, rank, created_at) VALUES (?, 's1', ?, 'bench', ?, ?, 0.5, 1, ?)",
                         (f"sm-{memory_id}", memory_id, ratings, score, now_iso()))
    assert _candidates(db, "p") == [ids[0]]


def test_the_rated_rows_are_read_from_their_partial_index(db):
    assert "idx_session_memories_rated" in plan_of(db, RATED)
