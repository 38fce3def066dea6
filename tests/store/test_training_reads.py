"""store.training_reads on both backends: a fit's candidate rows read once and kept, the memories'
state read fresh each fit, and what `session_candidate_rows` answers through them equal to a read
of the database (issue 36: the sidecar read every session's rows with their vectors every fit)."""

from __future__ import annotations

import json
from datetime import timedelta

import numpy as np

from kenning.core.clock import to_iso
from kenning.core.types import MemoryDraft
from kenning.predictor.synthetic import MODEL, SyntheticUser
from kenning.store import memories as mem_store
from kenning.store import predictor as store
from kenning.store import sessions as sess_store
from kenning.store import vectors
from kenning.store.training_reads import CandidateRows, reading_through


def _user(db, sessions: int) -> SyntheticUser:
    user = SyntheticUser(dims=384, seed=3, projects=("alpha", "beta"), topics_per_project=2, memories_per_topic=6,
                         candidates=12)
    user.populate(db)
    for i in range(sessions):
        user.record_session(db, i)
    return user


def _scored(db) -> list[store.ScoredSession]:
    return store.eligible_sessions(db.reader(), 0.0, 100)


def _fitted(db, sessions: int) -> tuple[list[store.ScoredSession], list[str], CandidateRows]:
    """A user with `sessions` scored sessions and a cache one fit has prepared: (sessions, their keys, the cache)."""
    _user(db, sessions)
    scored = _scored(db)
    reads = CandidateRows()
    reads.prepare(db.reader(), scored, MODEL)
    return scored, [s["session_key"] for s in scored], reads


def _through(db, reads: CandidateRows, keys: list[str]) -> dict[str, list[store.CandidateRow]]:
    with reading_through(reads):
        return {k: store.session_candidate_rows(db.reader(), k, MODEL) for k in keys}


def _fresh(db, keys: list[str]) -> dict[str, list[store.CandidateRow]]:
    return {k: store.session_candidate_rows(db.reader(), k, MODEL) for k in keys}


def test_prepared_rows_equal_the_databases_and_are_read_once(db):
    _user(db, 4)
    sessions = _scored(db)
    keys = [s["session_key"] for s in sessions]
    reads = CandidateRows()
    first = reads.prepare(db.reader(), sessions, MODEL)
    assert (first.sessions_read, first.sessions_cached) == (4, 0)
    assert first.vectors_read > 0
    assert _through(db, reads, keys) == _fresh(db, keys)
    assert all(len(rows) == 12 and all(r["vector"] is not None for r in rows) for rows in _fresh(db, keys).values())
    again = reads.prepare(db.reader(), sessions, MODEL)
    assert (again.sessions_read, again.sessions_cached, again.vectors_read) == (0, 4, 0)
    assert store.CANDIDATE_ROWS.get() is None  # the block ended: every other caller reads the database


def test_a_memory_changed_since_the_last_fit_is_seen_as_it_is_now(db):
    sessions, keys, reads = _fitted(db, 3)
    rows = _fresh(db, keys)[keys[0]]
    deleted, edited, replaced = rows[0]["memory_id"], rows[1]["memory_id"], rows[2]["memory_id"]
    with db.with_write_tx() as conn:
        mem_store.soft_delete(conn, deleted)
        mem_store.update_memory(conn, edited, {"importance": 0.99, "content": "an edited note about the deploy"})
        newer, _ = mem_store.insert_memory(conn, MemoryDraft(content="the newer rule", project="alpha"),
                                           embedding_model=MODEL)
        mem_store.update_memory(conn, replaced, {"superseded_by": newer})
        vectors.upsert_embedding(conn, mem_store.content_hash(conn, edited), MODEL, np.ones(384, np.float32) / 384**0.5)
    counts = reads.prepare(db.reader(), sessions, MODEL)
    assert (counts.sessions_read, counts.vectors_read) == (0, 1)  # the edited memory's new content hash
    seen = {r["memory_id"]: r for r in _through(db, reads, keys)[keys[0]]}
    assert seen[deleted]["is_deleted"] and seen[deleted]["deleted_at"]
    assert seen[edited]["importance"] == 0.99 and seen[edited]["content"] == "an edited note about the deploy"
    assert np.frombuffer(bytes(seen[edited]["vector"]), np.float32)[0] > 0.05  # the new content's vector
    assert seen[replaced]["superseded_by"] == newer
    assert _through(db, reads, keys) == _fresh(db, keys)


def test_new_and_rescored_sessions_are_read_and_dropped_ones_forgotten(db):
    user = _user(db, 3)
    reads = CandidateRows()
    reads.prepare(db.reader(), _scored(db), MODEL)
    user.record_session(db, 3)
    oldest = min(_scored(db), key=lambda s: s["started_at"] or "")["session_key"]
    with db.with_write_tx() as conn:  # judged again: its scored_at moves
        row = sess_store.get_session_score(conn, oldest)
        assert row is not None
        sess_store.upsert_session_score(conn, oldest, {**row, "reasoning": "again", "judge": "synthetic"},
                                        to_iso(user.start + timedelta(days=90)))
    sessions = _scored(db)
    counts = reads.prepare(db.reader(), sessions, MODEL)
    assert (counts.sessions_read, counts.sessions_cached) == (2, 2)
    keys = [s["session_key"] for s in sessions]
    assert _through(db, reads, keys) == _fresh(db, keys)
    kept = [s for s in sessions if s["session_key"] != oldest]
    counts = reads.prepare(db.reader(), kept, MODEL)
    assert (counts.sessions_read, counts.sessions_cached) == (0, 3)
    with reading_through(reads):
        assert reads.rows(oldest, MODEL) is None  # not prepared for this fit: read from the database
        assert store.session_candidate_rows(db.reader(), oldest, MODEL) == _fresh(db, [oldest])[oldest]
    assert reads.rows(keys[0], "another-model") is None


def test_between_fits_only_the_session_rows_and_vectors_are_kept(db):
    sessions, keys, reads = _fitted(db, 3)
    distinct = len({r["memory_id"] for rows in _fresh(db, keys).values() for r in rows})
    assert reads.held() == {"sessions": 3, "rows": 36, "memories": distinct, "vectors": distinct}
    assert all(m["content"] for m in reads._memories.values())
    reads.release()  # the fit has its samples
    # no memory content between fits; what saves the next fit its reads stays
    assert reads.held() == {"sessions": 3, "rows": 36, "memories": 0, "vectors": distinct}
    with reading_through(reads):
        assert reads.rows(keys[0], MODEL) is None  # released: a read now goes to the database
        assert store.session_candidate_rows(db.reader(), keys[0], MODEL) == _fresh(db, [keys[0]])[keys[0]]
    again = reads.prepare(db.reader(), sessions, MODEL)  # the next fit reads the memories' columns only
    assert (again.sessions_read, again.sessions_cached, again.vectors_read) == (0, 3, 0)
    assert _through(db, reads, keys) == _fresh(db, keys)
    ids = [row["memory_id"] for key in keys for row in reads.rows(key, MODEL) or []]
    repeated = {i for i in ids if ids.count(i) > 1}
    assert repeated  # a memory is a candidate of more than one session ...
    assert all(len({id(x) for x in ids if x == i}) == 1 for i in repeated)  # ... and its id is one str
    assert all(isinstance(text, bytes) for _, text in reads._rows.values())  # a session's rows: one text


def test_what_a_fit_keeps_goes_to_a_file_and_the_next_fit_reads_only_whats_new(db, tmp_path):
    sessions, keys, reads = _fitted(db, 3)
    reads.release()
    path = tmp_path / "model.reads.npz"
    reads.save(path)
    kept = CandidateRows.load(path)  # the next fit, in another process
    assert kept.held() == reads.held() and kept.model == MODEL
    assert kept._rows == reads._rows and kept._scored == reads._scored and kept._vectors == reads._vectors
    again = kept.prepare(db.reader(), sessions, MODEL)
    assert (again.sessions_read, again.sessions_cached, again.vectors_read) == (0, 3, 0)
    assert _through(db, kept, keys) == _fresh(db, keys)


def test_a_missing_or_damaged_reads_file_is_read_as_nothing_kept(db, tmp_path):
    assert CandidateRows.load(tmp_path / "none.npz").held() == {"sessions": 0, "rows": 0, "memories": 0, "vectors": 0}
    older = tmp_path / "format1.npz"  # an earlier build's file: its rows in the header, read again now
    header = {"format": 1, "model": MODEL, "sessions": {"s1": [None, [["m1"] + [None] * 14]]}, "vectors": [], "absent": []}
    np.savez(older, header=np.frombuffer(json.dumps(header).encode(), np.uint8), vectors=np.zeros(0, "<f4"))
    assert CandidateRows.load(older).held()["sessions"] == 0
    sessions, keys, reads = _fitted(db, 2)
    reads.release()
    path = tmp_path / "model.reads.npz"
    reads.save(path)
    good = path.read_bytes()
    for damaged in (good[: len(good) // 2], b"not a zip at all", good[:100] + bytes(200) + good[300:]):
        path.write_bytes(damaged)
        fresh = CandidateRows.load(path)
        assert fresh.held()["sessions"] == 0
        counts = fresh.prepare(db.reader(), sessions, MODEL)  # the fit reads everything, and is right
        assert counts.sessions_read == 2 and _through(db, fresh, keys) == _fresh(db, keys)
