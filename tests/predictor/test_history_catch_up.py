"""A daemon's history features kept current at each session end (history.catch_up) equal what reading
every signal event again (load_all) gives, on both store backends."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from kenning.core.clock import to_iso
import kenning.predictor.history as history_module
from kenning.predictor.history import History, catch_up, load_all
from kenning.predictor.synthetic import SyntheticUser
from kenning.store import sessions as sess_store

pytestmark = pytest.mark.parametrize("backend", ["sqlite", "postgres"])


def _user(db) -> SyntheticUser:
    user = SyntheticUser(dims=384, seed=5, projects=("alpha", "beta"), topics_per_project=2, memories_per_topic=6,
                         candidates=12)
    user.populate(db)
    return user


def _open(db, user: SyntheticUser, index: int, key: str) -> tuple[str, list[str]]:
    """A session that starts and has FTS hits but has not ended: (its key, its candidates)."""
    plan = user.session_plan(index)
    ids = user.candidates_for(plan)
    at = to_iso(plan["at"] + timedelta(minutes=30))
    rows: list[sess_store.CandidateRecord] = [
        {"memory_id": m, "source": "effective", "effective_score": 0.5, "predictor_score": None, "baseline_rank": r,
         "predictor_rank": None, "final_score": 1.0 / (12 + r), "rank": r, "was_injected": r <= 4}
        for r, m in enumerate(ids, 1)]
    with db.with_write_tx() as conn:
        sess_store.create_session(conn, key, harness="synthetic", project=plan["project"], cwd=None,
                                  context="still running", started_at=at)
        sess_store.insert_candidates(conn, key, rows, at)
        sess_store.increment_fts_hits(conn, key, ids[:3])
    return key, ids


def _events(history: History, leave_out: str | None = None) -> dict[str, list[tuple]]:
    out = {m: sorted((e.at, e.session_key, e.agent, e.fts, e.useful) for e in history.events(m)
                     if e.session_key != leave_out) for m in history.memory_ids()}
    return {m: rows for m, rows in out.items() if rows}


@pytest.mark.parametrize("fold", [False, True], ids=["spans", "folded"])
def test_catching_up_equals_reading_everything_again(db, fold, monkeypatch):
    """`folded`: the changed spans are folded into new columns at once (History._compact)."""
    if fold:
        monkeypatch.setattr(history_module, "COMPACT_ROWS", 0)
    user = _user(db)
    for i in range(4):
        user.record_session(db, i)
    running, running_ids = _open(db, user, 4, "running-at-load")
    history = load_all(db.reader())
    assert running in history.known_sessions() and running not in history.ended
    assert any(e.session_key == running for m in running_ids[:3] for e in history.events(m))

    # since: the running session is rated and ends; three sessions run start to end (on this daemon
    # or another); one more starts and is still running
    with db.with_write_tx() as conn:
        sess_store.increment_fts_hits(conn, running, running_ids[3:6])
        sess_store.apply_feedback(conn, running, {running_ids[0]: 0.9, running_ids[1]: 0.0})
        sess_store.end_session(conn, running, to_iso(user.session_plan(4)["at"] + timedelta(hours=1)))
    for i in range(5, 8):
        user.record_session(db, i)
    still, _ = _open(db, user, 8, "still-running")

    assert catch_up(history, db.reader()) == 4  # the running session and the three new ones
    assert bool(history.held[1]) is not fold  # changed spans, or none left after folding
    whole = load_all(db.reader())
    assert history.known_sessions() == whole.known_sessions()
    assert history.ended == whole.ended and still not in history.ended
    assert history.timeline == whole.timeline
    # every ended session's events as a full read has them; a session still running joins at its end
    assert _events(history) == _events(whole, leave_out=still)
    assert not any(e.session_key == still for m in history.memory_ids() for e in history.events(m))
    assert {k: v for k, v in history.useful.items() if k != still} == {k: v for k, v in whole.useful.items()
                                                                         if k != still}
    ids = sorted(whole.memory_ids())
    later = to_iso(user.session_plan(9)["at"])
    for project in ("alpha", "beta"):
        np.testing.assert_array_equal(history.features(ids, later, project, exclude=still),
                                      whole.features(ids, later, project, exclude=still))
    assert catch_up(history, db.reader()) == 0  # nothing new: nothing read


def test_a_session_with_no_signal_left_drops_what_was_held_of_it(db):
    user = _user(db)
    user.record_session(db, 0)
    key, ids = _open(db, user, 1, "hits-then-none")
    history = load_all(db.reader())
    assert key in history.members
    with db.with_write_tx() as conn:  # its rows lose their signal (as a purge or a reset would leave them)
        conn.execute("UPDATE session_memories SET fts_hit_count = 0 WHERE session_key = ?", (key,))
        sess_store.end_session(conn, key, to_iso(user.session_plan(1)["at"] + timedelta(hours=1)))
    assert catch_up(history, db.reader()) == 1
    assert key not in history.members and key not in history.useful
    assert _events(history) == _events(load_all(db.reader()))


def test_a_full_read_has_every_signal_row_batch_by_batch(db, monkeypatch):
    """load_all reads sessions a batch at a time and then the rows of sessions the table has no
    start for (purged from it): the same events as one statement over every row."""
    from kenning.store import predictor as store

    user = _user(db)
    for i in range(5):
        user.record_session(db, i)
    orphan_ids = user.candidates_for(user.session_plan(5))[:3]
    at = to_iso(user.session_plan(5)["at"])
    with db.with_write_tx() as conn:  # candidate rows of a session that has no sessions row
        sess_store.insert_candidates(conn, "no-session-row", [
            {"memory_id": m, "source": "effective", "effective_score": 0.5, "predictor_score": None,
             "baseline_rank": r, "predictor_rank": None, "final_score": 0.1, "rank": r, "was_injected": True}
            for r, m in enumerate(orphan_ids, 1)], at)
        sess_store.increment_fts_hits(conn, "no-session-row", orphan_ids)
    monkeypatch.setattr(history_module, "KEYS_PER_READ", 2)  # several batches of sessions
    batched = load_all(db.reader())
    one = History.build(store.signal_events(db.reader()), store.session_timeline(db.reader()))
    assert _events(batched) == _events(one)
    assert sum(1 for m in batched.memory_ids() for e in batched.events(m) if e.session_key == "no-session-row") == 3
    assert len(_events(batched)) > 10
