"""Issue 11: the scorer learns on default settings — evidence-based session confidence, 0.0 as a
rating, labels without an agent, history features from real session rows, the sidecar spawned
only once training is possible, old checkpoints refused and retrained.

Sessions run through the real session lifecycle (Kenning + SessionManager, bundled embedder,
heuristic judge: the default configuration) or the simulated user's store writes; sidecars
are real processes.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
import zlib
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from kenning.core.events import PromptSubmitted, SessionEnded, SessionStarted
from kenning.core.types import MemoryDraft
from kenning.predictor import checkpoint as ckpt
from kenning.predictor.context import Candidate, ScoringContext
from kenning.predictor.features import load_samples
from kenning.predictor.history import NO_HISTORY, load_all, rated_useful
from kenning.predictor.service import Predictor
from kenning.predictor.touched import identifiers, touched_memories
from kenning.predictor.weights import ScorerConfig, initial
from kenning.store import predictor as store
from kenning.store.memories import get_memories

THIN = "User: fix it\nAssistant: done"
TODAY = datetime.now(timezone.utc).date()


def day(n: int) -> str:
    """10:00 UTC, n days from today (memories are created now; sessions come after them)."""
    return f"{TODAY + timedelta(days=n)}T10:00:00Z"


def _memories(k, project: str) -> list[str]:
    texts = [f"{project} note {i}: the retry loop in src/{project}/worker_{i}.py backs off {i} seconds"
             for i in range(6)]
    # project-scope rules: only those (or pinned / verified memories) open a session (issue 31)
    return [r.id for r in k.remember_many([MemoryDraft(content=t, project=project, importance=0.5 + i / 20,
                                                       applies="project")
                                           for i, t in enumerate(texts)])]


def _session(k, key: str, project: str, at: str, *, feedback=None, prompt=lambda shown: "let's continue",
             transcript: str = THIN) -> dict:
    """session-start, one prompt (with feedback on what start showed, when given), session-end."""
    start = k.sessions.session_start(SessionStarted(session_key=key, project=project, timestamp=at))
    shown = start["memory_ids"]
    k.sessions.user_prompt_submit(PromptSubmitted(session_key=key, prompt=prompt(shown),
                                                  timestamp=at.replace(":00:00", ":05:00"),
                                                  memory_feedback=feedback(shown) if feedback is not None else {}))
    k.sessions.session_end(SessionEnded(session_key=key, transcript=transcript,
                                        timestamp=at.replace(":00:00", ":50:00")), wait=True)
    return start


def test_feedback_makes_a_thin_session_trainable_and_0_0_is_a_rating(kenning, settings):
    _memories(kenning, "thin")
    # the agent rates half of what it was shown (one of them 0.0), in a two-line transcript
    start = _session(kenning, "fb-thin", "thin", day(1),
                     feedback=lambda ids: {m: (0.0 if i == 0 else 0.9) for i, m in enumerate(ids[:3])})
    zero = start["memory_ids"][0]
    labels = kenning.predictor.labels("fb-thin")
    parts = labels["confidence_parts"]
    assert parts["judge"] < 0.6  # the heuristic judge alone would have refused this session
    assert parts["coverage"] >= 0.5 and parts["feedback_part"] >= 0.6
    assert labels["usable"] and labels["confidence"] >= 0.6
    row = next(c for c in labels["labels"] if c["memory_id"] == zero)
    assert row["agent_relevance_score"] == 0.0 and row["path"] == "agent"  # 0.0 is a rating, not "missing"
    assert row["label"] < min(c["label"] for c in labels["labels"] if c["path"] == "agent" and c["memory_id"] != zero)
    evidence = store.session_evidence(kenning.db.reader(), "fb-thin")
    assert evidence["usable"] and evidence["parts"]["rated"] == parts["rated"]

    env = {**os.environ, "KENNING_HOME": str(settings.home), "KENNING_PORT": "9", "COLUMNS": "250",
           "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-m", "kenning", "predictor", "labels", "fb-thin"], env=env,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    assert "used for training" in out.stdout and "confidence = feedback" in out.stdout
    line = next(ln for ln in out.stdout.splitlines() if zero in ln)
    assert "0.00 (1)" in line  # shown as a rating in the label table


def test_no_feedback_and_a_thin_transcript_is_not_trainable(kenning):
    _memories(kenning, "bare")
    _session(kenning, "bare-thin", "bare", day(1))
    labels = kenning.predictor.labels("bare-thin")
    assert labels["confidence_parts"]["rated"] == 0 and labels["confidence"] < 0.6
    assert not labels["usable"] and labels["skip_reason"] == "low_confidence"
    assert not store.session_evidence(kenning.db.reader(), "bare-thin")["usable"]


def test_without_an_agent_the_transcript_touching_memories_gives_labels(kenning):
    ids = _memories(kenning, "solo")
    transcript = "\n".join([
        "User: the retry loop is flaky again", "Assistant: I opened src/solo/worker_1.py and worker_3.py",
        "User: and the backoff?", "Assistant: worker_1.py backs off 1 seconds; I changed it",
        "User: good, run the tests", "Assistant: tests pass", "User: commit it", "Assistant: committed"])
    _session(kenning, "solo-1", "solo", day(1), transcript=transcript,
             prompt=lambda shown: "look at the retry loop")
    touched = store.touched_ids(kenning.db.reader(), "solo-1")
    assert ids[1] in touched and ids[3] in touched and ids[0] not in touched
    labels = kenning.predictor.labels("solo-1")
    by_id = {c["memory_id"]: c for c in labels["labels"]}
    assert by_id[ids[1]]["touched"] and by_id[ids[1]]["label"] > by_id[ids[0]]["label"]
    assert labels["confidence_parts"]["touched"] + labels["confidence_parts"]["fts_matched"] >= 2


def test_identifiers_and_entities_are_what_touch_a_memory():
    assert {"src/auth/jwt.py", "jwt.py", "parse_config", "v2.1", "retrycount"} <= identifiers(
        "edit src/auth/jwt.py, call parse_config on v2.1; retryCount too")
    assert identifiers("the quick brown fox jumps") == set()
    out = touched_memories("I ran deploy.sh against Postgres", {"a": "use deploy.sh", "b": "the db is fine",
                                                                 "c": "nothing here"}, {"b": ["Postgres"]})
    assert set(out) == {"a", "b"} and "entity postgres" in out["b"]


def test_history_features_from_real_session_rows(kenning):
    ids = _memories(kenning, "hist")
    picked: dict[str, str] = {}

    def prompt(shown):  # name the file of a memory the agent will not rate: an FTS hit
        picked["fts"] = next(m for m in ids if m not in shown[:2])
        return f"what about worker_{ids.index(picked['fts'])}.py"

    first = _session(kenning, "hist-1", "hist", day(1), prompt=prompt,
                     feedback=lambda shown: {shown[0]: 0.9, shown[1]: -0.5})
    good, bad, fts = first["memory_ids"][0], first["memory_ids"][1], picked["fts"]
    conn = kenning.db.reader()
    assert next(store.signal_events(conn, memory_ids=[fts]))["fts"] >= 1
    at = day(2)  # the next day's session of the same project
    cands = [good, bad, fts, "never-seen"]
    feats = load_all(conn).features(cands, at, "hist", exclude="hist-2")
    one_day = np.log1p(1.0) / np.log1p(90.0)  # events date from their session's start, one day earlier
    assert feats[0][0] == pytest.approx(one_day, abs=1e-4) and feats[0][2] == pytest.approx(0.9)
    assert feats[0][3] == 1.0  # rated useful in the project's previous session
    assert feats[1][0] == 1.0 and feats[1][2] == pytest.approx(-0.5) and feats[1][3] == 0.0
    # issue 32: the latest rating, and the share of the project's last three sessions it was useful in
    assert feats[0][5] == pytest.approx(0.9) and feats[1][5] == pytest.approx(-0.5)
    assert feats[0][6] == pytest.approx(1 / 3) and feats[1][6] == 0.0
    # the prompt named its file: an FTS hit (dates it) and touched (useful: one FTS hit alone is not)
    assert feats[2][1] == pytest.approx(one_day, abs=1e-4) and feats[2][3] == 1.0
    assert fts in store.touched_ids(conn, "hist-1")
    assert tuple(feats[3]) == pytest.approx(NO_HISTORY)
    # another project's session is not "the previous session"; ratings still count
    other = load_all(conn).features(cands, at, "elsewhere")
    assert other[0][3] == 0.0 and other[0][2] == pytest.approx(0.9)
    # training reads the same values as scoring: the session's own sample, as of its start
    def scoring(ids: list[str], at_iso: str, key: str) -> np.ndarray:  # the daemon's scoring path
        found = get_memories(conn, ids)
        params = kenning.predictor.scoring.params(ScoringContext(session_key=key, project="hist", timestamp=at_iso),
                                                 [Candidate.of(found[m]) for m in ids])
        return np.asarray(params["candidate_features"], np.float32)[:, 12:]

    scoring(cands[:3], at, "hist-2")  # scoring's history is loaded now, before hist-2 ends
    _session(kenning, "hist-2", "hist", at, feedback=lambda shown: {m: 0.8 - i % 2 for i, m in enumerate(shown)})
    session = store.session_score(conn, "hist-2")
    samples, _ = load_samples(conn, [session], store.embedding_model_in_use(conn))
    sample = samples[0]
    scored = scoring(sample.ids, session["started_at"], "hist-2")
    assert np.allclose(sample.features[:, 12:], scored) and scored[:, 3].sum() >= 2
    # ... and scoring sees hist-2's signals once it ended (its history is refreshed at session end)
    later = scoring(sample.ids, day(3), "hist-3")
    assert np.allclose(later, load_all(conn).features(sample.ids, day(3), "hist", exclude="hist-3"))
    assert not np.allclose(later[:, 3], scored[:, 3])  # the previous session is hist-2 now


def test_rated_useful_before_from_real_session_rows(kenning):
    """labels' `rated_useful`: what the agent rated >= 0.5 in sessions that started earlier."""
    _memories(kenning, "rated")
    first = _session(kenning, "rated-1", "rated", day(1), feedback=lambda shown: {shown[0]: 0.9, shown[1]: 0.2})
    good, lukewarm = first["memory_ids"][:2]
    conn = kenning.db.reader()
    assert rated_useful(conn, [good, lukewarm, "never-seen"], day(2)) == {good}
    assert rated_useful(conn, [good, lukewarm], day(1)) == set()  # not before the session it was rated in
    history = load_all(conn)  # training's loaded History answers the same
    assert rated_useful(conn, [good, lukewarm, "never-seen"], day(2), history) == {good}
    assert rated_useful(conn, [good, lukewarm], day(1), history) == set()


def _settings(pred_settings, **kw):
    return pred_settings.model_copy(update={"predictor": pred_settings.predictor.model_copy(update=kw)})


def test_sidecar_is_spawned_only_once_training_is_possible(pred_settings, pdb, user):
    p = Predictor(_settings(pred_settings, min_training_sessions=4, train_interval_sessions=50), pdb)
    assert p.start() is False and p.client is None  # fresh install: no second PyTorch process
    try:
        for i in range(4):
            user.record_session(pdb, i)
            out = p.on_session_end(user.session_plan(i)["key"])
            assert out["usable"] is True
            if i < 3:
                assert p.client is None and out["training_triggered"] is False
        assert p.client is not None and out["training_triggered"] is True  # spawned, and trains at once
        p.trainer.wait(180)
        assert p.client.alive and p.state.model_version == 1
        assert store.count_usable_sessions(pdb.reader()) == 4
    finally:
        p.stop()


def _old_checkpoint(path) -> None:
    """A format-1 file as the previous build wrote it: the 12-feature model, version 1."""
    weights = initial(ScorerConfig(native_dim=384, n_features=12, seed=1))
    data = bytearray(ckpt.to_bytes(weights, flags=ckpt.FLAG_FINETUNED, meta={"model_version": 7})[:-4])
    data[4:8] = struct.pack("<I", 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(data) + struct.pack("<I", zlib.crc32(bytes(data))))


def test_an_old_checkpoint_is_refused_and_the_model_retrained(pred_settings, pdb, user):
    p = Predictor(pred_settings, pdb)
    _old_checkpoint(p.checkpoint_path)
    with pytest.raises(ckpt.CheckpointError, match="version 1 .*12-feature.* retrains"):
        ckpt.load(p.checkpoint_path)
    for i in range(12):
        user.record_session(pdb, i)
    try:
        assert p.start() is True  # a checkpoint on disk: training was possible before
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            log, _ = store.list_training_log(pdb.reader())
            if log and not p.trainer.in_progress():
                break
            time.sleep(0.2)
        assert "refused SGPT checkpoint version 1" in p.client.last_status["checkpoint_error"]
        assert log[0]["trigger"] == "checkpoint_refused" and log[0]["swapped"]
        model, flags, _ = ckpt.load(p.checkpoint_path)  # rewritten in the current format
        assert model.config.n_features == 19 and flags & ckpt.FLAG_FINETUNED
    finally:
        p.stop()


@pytest.fixture(params=[False, True], ids=["recall-order", "fused-order"])
def prompt_order(request, home) -> bool:
    """Before `kenning`: its config says whether the first prompt injects in the predictor's fused order."""
    # session-start shows at most ~2 of the project's notes, so the first prompt injects the rest itself
    (home / "config.yaml").write_text(f"sessions:\n  prompt_predictor_order: {str(request.param).lower()}\n"
                                      "  start_budget_chars: 250\n", encoding="utf-8")
    return request.param


def test_the_first_prompts_pool_is_ranked_with_the_prompt_and_trains(prompt_order, kenning):
    from kenning.sessions.context import Deadline
    from kenning.sessions.prompt_rank import PHASE, rank_prompt_pool
    from kenning.store.memories import get_memories
    from kenning.store.sessions import get_session

    ids = _memories(kenning, "pp")
    rated: set[str] = set()
    for i in range(4):
        start = _session(kenning, f"pp-{i}", "pp", day(i + 1),
                         feedback=lambda shown, i=i: {m: (0.9 if j % 3 == i % 3 else 0.0) for j, m in enumerate(shown)})
        rated |= set(start["memory_ids"])
    assert kenning.predictor.train_now()["swapped"] is True  # a manual train starts the sidecar
    # scores say which candidates the model has no history for: fusion keeps their baseline rank
    fresh = kenning.remember_many([MemoryDraft(content="pp note 9: worker_9.py is new", project="pp")])[0].id
    known = get_memories(kenning.db.reader(), [*ids, fresh])
    scores = kenning.predictor.score(ScoringContext(session_key=None, project="pp", timestamp=day(5)),
                                     [Candidate.of(known[m]) for m in [*ids, fresh]])
    assert rated and fresh in scores.unseen and not scores.unseen & rated
    kenning.sessions.session_start(SessionStarted(session_key="pp-4", project="pp", timestamp=day(5)))
    conn = kenning.db.reader()
    session = get_session(conn, "pp-4")
    found = get_memories(conn, ids)
    # a prompt that names no one worker: one naming worker_2.py would hold the notes about the other workers to
    # the prompt bar's other-code bar (issue 32), and this test is about ranking the pool the bar lets through
    prompt = "the retry loop in the workers backs off wrongly"
    ranking = rank_prompt_pool(kenning.sessions.deps, session, prompt, [found[m] for m in ids], Deadline(10_000))
    assert ranking is not None and sorted(ranking.order) == sorted(ids)
    assert all(r["predictor_score"] is not None and r["baseline_rank"] for r in ranking.rows)
    assert [r["final_rank"] for r in ranking.rows] == list(range(1, len(ids) + 1))
    # the hook itself: the first prompt ranks its recall pool with the prompt and records it
    answer = kenning.sessions.user_prompt_submit(
        PromptSubmitted(session_key="pp-4", prompt=prompt, timestamp=day(5).replace(":00:00", ":05:00"),
                        memory_feedback={m: (0.9 if m == ids[2] else 0.0) for m in ids}), Deadline(30_000))
    assert kenning.predictor.flush_contexts()
    recorded = store.session_context(conn, f"pp-4#{PHASE}")
    assert recorded["context_text"] == prompt and recorded["scored"] == 1
    pool = store.pools(conn, "pp-4")[PHASE]
    assert kenning.predictor.audit("pp-4")["pools"][PHASE] == pool  # the audit shows it too
    assert set(ids) & {r["memory_id"] for r in pool} and all(r["predictor_score"] is not None for r in pool)
    # the pool is recorded either way; what was newly injected follows the fused order only when
    # configured, else a team draft of recall's (baseline) order and the predictor's own (issue 32,
    # f709257): each pick's team is recorded, and each team's picks come in its own ranking's order
    assert answer["memory_ids"]
    if prompt_order:
        rank = {r["memory_id"]: r["final_rank"] for r in pool}
        assert answer["memory_ids"] == sorted(answer["memory_ids"], key=rank.__getitem__)
    else:
        teams = {r["memory_id"]: r["team"] for r in kenning.sessions.detail("pp-4")["memories"]}
        # a pick both rankings would have made there is shared, credited to neither (issue 32, 1565125)
        assert all(teams[m] in ("baseline", "predictor", "shared") for m in answer["memory_ids"]), teams
        for team, key in (("baseline", "baseline_rank"), ("predictor", "predictor_rank")):
            rank = {r["memory_id"]: r[key] for r in pool}
            picks = [m for m in answer["memory_ids"] if teams[m] == team]
            assert picks == sorted(picks, key=rank.__getitem__), (team, picks)
    kenning.sessions.session_end(SessionEnded(session_key="pp-4", transcript=THIN), wait=True)
    samples, _ = load_samples(conn, [store.session_score(conn, "pp-4")], store.embedding_model_in_use(conn))
    assert [s.session_key for s in samples] == ["pp-4", f"pp-4#{PHASE}"]
    assert samples[1].ctx_tokens != samples[0].ctx_tokens and set(samples[1].ids) <= set(samples[0].ids)
