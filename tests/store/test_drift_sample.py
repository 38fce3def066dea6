"""The drift signal's read on both backends: the newest judged candidate rows only, from m039's
partial index (issue 36: it had read every judged row of 30 days, joined with its memory — on
PostgreSQL at a million memories a hash of the whole memories table, 1.2 s before each training)."""

from __future__ import annotations

from kenning.core.types import MemoryDraft
from kenning.store import memories as mem_store
from kenning.store import predictor as store
from tests.store.plans import plan_of

JUDGED = ("SELECT session_key, memory_id, relevance_score, created_at FROM session_memories"
          " WHERE relevance_score IS NOT NULL AND created_at >= '2026-01-01' ORDER BY created_at DESC LIMIT 10")


def _judged(db, rows: list[tuple[str, str, float | None]]) -> None:
    """Candidate rows of session s1 (started 2026-03-01): (memory created_at, row created_at, relevance)."""
    with db.with_write_tx() as conn:
        conn.execute("INSERT INTO sessions(session_key, started_at) VALUES ('s1', '2026-03-01T09:00:00.000Z')")
        for i, (born, at, relevance) in enumerate(rows):
            memory_id, _ = mem_store.insert_memory(conn, MemoryDraft(content=f"deploy note {i}", project="p",
                                                                     created_at=born))
            conn.execute("INSERT INTO session_memories(id, session_key, memory_id, source, relevance_score,"
                         " final_score, rank, created_at) VALUES (?, 's1', ?, 'bench', ?, 0.5, ?, ?)", (f"sm{i}", memory_id, relevance, i, at))


def test_the_newest_judged_rows_make_the_signal(db):
    _judged(db, [("2026-02-28T09:00:00.000Z", "2026-03-01T09:00:03.000Z", 0.9),   # young, newest
                 ("2026-01-01T09:00:00.000Z", "2026-03-01T09:00:02.000Z", 0.2),   # old
                 ("2026-01-02T09:00:00.000Z", "2026-03-01T09:00:01.000Z", 0.6),   # old, third newest
                 ("2026-02-27T09:00:00.000Z", "2026-03-01T09:00:04.000Z", None),  # not judged
                 ("2026-02-26T09:00:00.000Z", "2026-02-01T09:00:00.000Z", 0.1)])  # before `since`
    with db.with_write_tx() as conn:  # a judged row whose memory is gone (purged) is not a sample
        conn.execute("INSERT INTO session_memories(id, session_key, memory_id, source, relevance_score,"
                     " final_score, rank, created_at) VALUES ('gone', 's1', 'purged', 'bench', 0.0, 0.5, 9,"
                     " '2026-03-01T09:00:05.000Z')")
    since = "2026-02-15T00:00:00.000Z"
    every = store.relevance_by_memory_age(db.reader(), since)
    assert (every.recent_avg, every.samples) == (0.9, 3) and abs((every.old_avg or 0) - 0.4) < 1e-9
    newest = store.relevance_by_memory_age(db.reader(), since, limit=3)  # the purged row's place counts
    assert (newest.recent_avg, newest.old_avg, newest.samples) == (0.9, 0.2, 2)


def test_the_judged_rows_are_read_from_their_partial_index(db):
    assert "idx_session_memories_judged" in plan_of(db, JUDGED)
