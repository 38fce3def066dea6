"""The Predictor facade end to end: real DB, real sidecar, the session-start/end interface."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from kenning.core import activity
from kenning.core.events import SessionStarted
from kenning.predictor.context import Candidate, ScoringContext
from kenning.predictor.scoring import Scoring
from kenning.predictor.service import Predictor
from kenning.store import predictor as store
from tests.predictor.test_predictor_sidecar import wait_for


def candidates_for(user, plan, ids):
    return [Candidate(id=m, embedding=user.vectors[m], content=f"memory {m}", importance=0.5,
                      access_count=1, created_at="2025-12-01T00:00:00.000Z") for m in ids]


@pytest.fixture
def predictor(pred_settings, pdb):
    p = Predictor(pred_settings.model_copy(update={"predictor": pred_settings.predictor.model_copy(
        update={"train_interval_sessions": 5})}), pdb)
    p.start(wait_ready=True, force=True)
    yield p
    p.stop()


def test_cold_start_scores_none_then_trains_compares_and_records(predictor, pdb, user):
    plan = user.session_plan(0)
    ids = user.candidates_for(plan)
    ctx = ScoringContext(session_key=plan["key"], project=plan["project"], embedding=user.context_vector(plan),
                         timestamp=plan["at"].isoformat())
    assert predictor.score(ctx, candidates_for(user, plan, ids)) is None  # untrained: baseline
    assert predictor.status_line() == "[predictor: collecting | 0/10 sessions | baseline only]"
    assert predictor.flush_contexts()
    assert store.session_context(pdb.reader(), plan["key"])["scored"] == 0
    for i in range(12):
        user.record_session(pdb, i)
    result = predictor.train_now()
    assert result["swapped"] is True and result["error"] is None
    log, total = store.list_training_log(pdb.reader())
    assert total == 1 and log[0]["swapped"] and log[0]["canary_ndcg"] is not None and log[0]["gates"]["passed"]
    assert predictor.status_line().startswith("[predictor: warming | success_rate=0.50 | model_v1")

    plan = user.session_plan(12)
    ids = user.candidates_for(plan)
    ctx = ScoringContext(session_key=plan["key"], project=plan["project"], embedding=user.context_vector(plan),
                         text="next session", timestamp=plan["at"].isoformat())
    scores = predictor.score(ctx, candidates_for(user, plan, ids))
    assert scores is not None and set(scores) == set(ids)
    fused = predictor.fuse(ids, scores, top_k=10)
    assert [f.memory_id for f in fused] == ids  # cold start: α = 1, baseline order, predictor ranks recorded
    assert all(f.predictor_rank is not None for f in fused)
    assert {f.source for f in fused} <= {"effective", "both", "predictor"}
    user.record_session(pdb, 12, predictor_scores=scores, candidates=ids, context_vector=ctx.embedding)
    out = predictor.on_session_end(plan["key"])
    assert out["status"] == "recorded" and out["ema_updated"] is True
    assert predictor.on_session_end(plan["key"])["status"] == "skipped"  # idempotent on retry
    row = store.comparison_for_session(pdb.reader(), plan["key"])
    # judge 0.85 plus full agent feedback and FTS hits: the evidence-based confidence is higher
    assert row["alpha"] == 1.0 and row["scorer_confidence"] > 0.85
    assert row["scorer_confidence"] == pytest.approx(predictor.labels(plan["key"])["confidence"])
    assert len(row["predictor_top_ids"]) == 10 and len(row["baseline_top_ids"]) == 10
    assert set(row["relevance_scores"]) >= set(row["baseline_top_ids"])
    assert row["success_rate"] == predictor.state.success_rate

    status = predictor.status()
    assert status["mode"] == "warming" and status["param_count"] > 1_000_000
    assert status["sidecar"]["running"] and status["health"]["status"] == "cold_start"
    labels = predictor.labels(plan["key"])
    assert labels["usable"] and len(labels["labels"]) == len(ids)
    audit = predictor.audit(plan["key"])
    assert audit["comparison"]["id"] == row["id"] and audit["confidence_gate_passed"]


def test_training_is_triggered_every_n_sessions(predictor, pdb, user):
    for i in range(5):
        user.record_session(pdb, i)
        out = predictor.on_session_end(user.session_plan(i)["key"])
        assert out["ema_updated"] is False  # no predictor ranking yet
    assert out["training_triggered"] is True
    predictor.trainer.wait(120)
    assert predictor.state.first_training_done and predictor.state.model_version == 1
    assert store.list_training_log(pdb.reader())[1] == 1
    assert store.list_drift_signals(pdb.reader())


def test_a_due_training_waits_for_the_agents_to_pause(predictor, pdb, user):
    """A run that comes due while an agent's request runs (core.activity) starts only once no request
    has run for the quiet window; a manual run starts at once; stopping cancels one still waiting."""
    for i in range(12):
        user.record_session(pdb, i)
    trainer = predictor.trainer
    trainer.quiet_s = 2.0
    activity.foreground_started()  # an agent's request in flight
    try:
        assert trainer.train_async("interval")
        time.sleep(3.0)
        assert trainer.in_progress() and store.list_training_log(pdb.reader())[1] == 0  # waiting: no fit yet
        status = predictor.status()
        assert status["training_in_progress"] and status["training_waiting_since"] is not None
    finally:
        activity.foreground_ended()
    ended = time.monotonic()
    assert trainer.wait(120)
    log, total = store.list_training_log(pdb.reader())
    assert total == 1 and log[0]["trigger"] == "interval" and log[0]["swapped"]
    assert time.monotonic() - ended >= trainer.quiet_s
    assert predictor.status()["training_waiting_since"] is None

    activity.foreground_started()
    try:
        assert trainer.train_async("manual") and trainer.wait(120)  # not deferred: done while the request runs
        assert store.list_training_log(pdb.reader())[1] == 2
        assert trainer.train_async("drift_reset")
        trainer.cancel()  # the daemon stops
        assert trainer.wait(10)
    finally:
        activity.foreground_ended()
    assert store.list_training_log(pdb.reader())[1] == 2  # the waiting run never trained


def test_every_retrain_is_logged_with_its_canary_figures_and_gate_verdict(predictor, pdb, user):
    """A broken judge's sessions (every signal inverted) get trained on; whatever the gates decide
    is logged with the canary figures and leaves the matching model serving. (A retrain the gates
    refuse leaves the serving model untouched: test_predictor_gates.py drives one through `train`.)"""
    clean = [user.record_session(pdb, i, confidence=0.95) for i in range(30)]
    first = predictor.train_now()
    assert first["swapped"] is True
    for copy in range(4):
        for i, c in enumerate(clean):
            user.record_session(pdb, i, confidence=0.7, corrupt=True, key_suffix=f"-bad{copy}",
                                candidates=c["candidates"], context_vector=c["context_vector"],
                                shift_days=100.0 * (copy + 1))
    second = predictor.train_now()
    assert second["gates"]["finite"] is True and second["swapped"] == second["gates"]["passed"]
    log, total = store.list_training_log(pdb.reader())
    assert total == 2 and [row["swapped"] for row in log] == [second["swapped"], True]
    assert log[0]["canary_ndcg"] == pytest.approx(second["canary"]["canary_ndcg"])
    assert log[0]["train_validation_failures"] == (0 if second["swapped"] else 1)
    assert predictor.client.call("status")["model_version"] == (2 if second["swapped"] else 1)


def test_a_score_never_waits_behind_the_first_history_read(predictor, pdb, user):
    """Reading every signal event takes seconds at a million memories: a daemon reads it as it
    starts, and a score that comes while another thread reads it the first time answers None (the
    baseline) at once instead of waiting — session starts that waited filled the hook pool."""
    for i in range(12):
        user.record_session(pdb, i)
    assert predictor.train_now()["swapped"] is True
    assert predictor.scoring._history is not None  # read by start(wait_ready=True), before any score
    plan = user.session_plan(12)
    ids = user.candidates_for(plan)
    ctx = ScoringContext(session_key=plan["key"], project=plan["project"], embedding=user.context_vector(plan),
                         text="next session", timestamp=plan["at"].isoformat())
    fresh = Scoring(predictor.cfg, pdb, predictor.sidecar, predictor.cell)  # a daemon that has not read it yet
    reading, done = threading.Event(), threading.Event()

    def first_read() -> None:  # another thread's first read, in progress until `done` (at most 10 s)
        with fresh._history_lock:
            reading.set()
            done.wait(10)

    reader = threading.Thread(target=first_read)
    reader.start()
    assert reading.wait(10)
    began = time.monotonic()
    assert not fresh.history_ready()
    assert fresh.score(ctx, candidates_for(user, plan, ids)) is None
    waited = time.monotonic() - began
    done.set()
    reader.join()
    assert waited < 5.0  # not behind the read
    assert fresh.history_ready()  # no read in progress: this one reads it
    scores = fresh.score(ctx, candidates_for(user, plan, ids))
    assert scores is not None and set(scores) == set(ids)
    assert fresh.contexts.flush()


def test_a_daemon_start_reads_the_history_in_the_background(pred_settings, pdb, user):
    for i in range(3):
        user.record_session(pdb, i)
    p = Predictor(pred_settings, pdb)
    try:
        assert p.start(force=True)  # as the daemon starts it: not waiting for the sidecar
        assert wait_for(lambda: p.scoring._history is not None, 30)
        assert p.scoring.history().memory_ids()  # the recorded sessions' events
    finally:
        p.stop()


def test_a_hung_sidecar_means_baseline(pred_settings, pdb, user):
    p = Predictor(pred_settings, pdb, extra_sidecar_args=["--fault", "hang"])
    p.start(wait_ready=True, force=True)
    try:
        plan = user.session_plan(0)
        ids = user.candidates_for(plan)
        assert p.score(ScoringContext(session_key=plan["key"]), candidates_for(user, plan, ids)) is None
        assert p.client.timeouts == 1
        assert p.fuse(ids, None)[0].memory_id == ids[0]
    finally:
        p.stop()


def test_disabled_in_config_never_spawns(pred_settings, pdb):
    settings = pred_settings.model_copy(update={"predictor": pred_settings.predictor.model_copy(update={"enabled": False})})
    p = Predictor(settings, pdb)
    p.start()
    assert p.client is None and p.score(ScoringContext(session_key="s"), [Candidate(id="m")]) is None
    assert p.status_line() == "[predictor: disabled | off in config | baseline fallback]"
    assert p.status()["mode"] == "disabled"


def test_status_keeps_the_daemon_torch_free(pred_settings, pdb):
    """The daemon never imports torch for the status report (the sidecar holds the model)."""
    code = ("import sys; from kenning.core.config import load_settings; from kenning.store.db import open_database;"
            " from kenning.predictor.service import Predictor; s = load_settings();"
            " st = Predictor(s, open_database(s.db_path)).status();"
            " print(st['param_count'], st['mode'], 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True,
                         env={**os.environ, "KENNING_HOME": str(pred_settings.home)})
    assert out.stdout.split() == [str(Predictor(pred_settings, pdb).sidecar.param_count()), "collecting", "False"]


def test_config_section_has_the_seeds_eight_parameters():
    from kenning.core.config_predictor import PredictorSettings

    defaults = PredictorSettings()
    assert defaults.model_dump() == {
        "enabled": True, "train_interval_sessions": 10, "min_training_sessions": 10, "score_timeout_ms": 120,
        "crash_disable_threshold": 3, "rrf_k": 12, "exploration_rate": 0.05, "drift_reset_window": 10}
    assert PredictorSettings.model_validate({"trainIntervalSessions": 5, "rrfK": 20}).rrf_k == 20
    with pytest.raises(Exception):
        PredictorSettings.model_validate({"hashBuckets": 4096})  # hardcoded, not configurable


def test_config_yaml_errors_name_the_key(tmp_path):
    from kenning.core.config import load_settings
    from kenning.core.errors import ConfigError

    (tmp_path / "config.yaml").write_text("predictor:\n  exploration_rate: 2\n")
    with pytest.raises(ConfigError, match="predictor.exploration_rate"):
        load_settings(environ={"KENNING_HOME": str(tmp_path)})


def test_session_start_answers_with_the_baseline_when_the_sidecar_hangs(pred_settings):
    """The real session-start path (sessions code + bundled embedder) with a hanging sidecar."""
    from kenning.core.types import MemoryDraft
    from kenning.service import Kenning

    k = Kenning(pred_settings).start(background=False)
    try:
        for text in ("deploy with scripts/deploy.sh", "the CI cache breaks when uv.lock changes",
                     "payments API lives in services/payments", "run ruff before committing"):
            # project-scope rules: only those (or pinned / verified memories) open a session (issue 31)
            k.remember(MemoryDraft(content=text, project="shop", importance=0.7, applies="project"))
        k.predictor = k.sessions.deps.predictor = Predictor(pred_settings, k.db, extra_sidecar_args=["--fault", "hang"])
        k.predictor.start(wait_ready=True, force=True)
        first_pid = k.predictor.client.pid
        for i in range(2):
            out = k.sessions.session_start(SessionStarted(session_key=f"hang-{i}", project="shop",
                                                          context="fix the deploy script"))
            assert out["memory_ids"] and out["predictor_used"] is False  # baseline answered
            assert out["status_line"] == "[predictor: collecting | 0/10 sessions | baseline only]"
        assert k.predictor.client.timeouts == 2
        assert k.predictor.client.crashes_last_hour() == 1  # two timeouts in a row: treated as hung
        deadline = time.monotonic() + 60
        while k.predictor.client.pid in (None, first_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert k.predictor.client.pid not in (None, first_pid)  # restarted with a fresh process
    finally:
        k.predictor.stop()
        k.close()
