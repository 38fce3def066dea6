"""The predictor history's signal rows on both backends: rated, FTS-hit and touched candidate rows,
each kind read from its own index (m061, m038, predictor_touched's key) instead of a scan of every
candidate row ever recorded (issue 36: each daemon read them after every session end)."""

from __future__ import annotations

from kenning.core.types import MemoryDraft
from kenning.store import memories as mem_store
from kenning.store import predictor as store
from tests.store.plans import plan_of


def _rows(db) -> dict[str, str]:
    """Two sessions' candidate rows: one of each signal kind, one with two, plain ones; {name: memory id}."""
    names = ("rated", "fts", "touched", "rated_and_fts", "plain", "plain_touched_elsewhere")
    with db.with_write_tx() as conn:
        ids = {n: mem_store.insert_memory(conn, MemoryDraft(content=f"deploy note {n}", project="p"))[0] for n in names}
        conn.execute("INSERT INTO sessions(session_key, started_at) VALUES ('s1', '2026-03-01T09:00:00.000Z')")
        conn.execute("INSERT INTO sessions(session_key, started_at) VALUES ('s2', '2026-03-02T09:00:00.000Z')")
        signals = {"rated": (1, 0), "fts": (0, 2), "touched": (0, 0), "rated_and_fts": (2, 1), "plain": (0, 0),
                   "plain_touched_elsewhere": (0, 0)}
        for i, (name, (ratings, hits)) in enumerate(signals.items()):
            session = "s2" if name == "rated_and_fts" else "s1"
            conn.execute("INSERT INTO session_memories(id, session_key, memory_id, source, agent_feedback_count,"
                         " agent_relevance_score, fts_hit_count, final_score, rank, created_at)"
                         " VALUES (?, ?, ?, 'bench', ?, ?, ?, 0.5, ?, '2026-03-01T09:00:00.000Z')",
                         (f"sm{i}", session, ids[name], ratings, 0.9 if ratings else None, hits, i))
        store.record_touched(conn, "s1", {ids["touched"]: "file"})
        store.record_touched(conn, "s2", {ids["plain_touched_elsewhere"]: "file"})  # not a candidate of s2
    return ids


def test_every_row_with_a_signal_and_no_other(db):
    ids = _rows(db)
    events = store.signal_events(db.reader())
    assert [(e["session_key"], e["memory_id"]) for e in events] == sorted(
        [("s1", ids["rated"]), ("s1", ids["fts"]), ("s1", ids["touched"])]) + [("s2", ids["rated_and_fts"])]
    by_memory = {e["memory_id"]: e for e in events}
    assert by_memory[ids["touched"]]["touched"] and not by_memory[ids["rated"]]["touched"]
    assert (by_memory[ids["rated_and_fts"]]["ratings"], by_memory[ids["rated_and_fts"]]["fts"]) == (2, 1)
    assert [e["memory_id"] for e in store.signal_events(db.reader(), memory_ids=[ids["fts"], ids["plain"]])] == [
        ids["fts"]]
    assert [e["memory_id"] for e in store.signal_events(db.reader(), before="2026-03-02T00:00:00.000Z")
            if e["session_key"] == "s2"] == []


def test_each_kind_of_signal_row_is_read_from_an_index(db):
    assert "idx_session_memories_fts_hits" in plan_of(db, "SELECT id FROM session_memories WHERE fts_hit_count > 0")
    assert "idx_session_memories_rated" in plan_of(db, "SELECT id FROM session_memories WHERE agent_feedback_count > 0")
