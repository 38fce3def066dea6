"""α, EMA, cold-start exit, early floors and drift reset on scripted comparison sequences."""

from __future__ import annotations

import pytest

from kenning.predictor.alpha import AlphaState, current_alpha, record_session, record_training, status_line

RULES = {"min_training_sessions": 10, "drift_reset_window": 10}


def play(state: AlphaState, outcomes: list, project: str = "p") -> AlphaState:
    """outcomes: 'W' win, 'L' loss, 'low' low-confidence win, None no predictor ranking."""
    for o in outcomes:
        if o is None:
            state, _ = record_session(state, predictor_ndcg=None, baseline_ndcg=None, confidence=0.9,
                                      project=project, **RULES)
        else:
            won = o in ("W", "low")
            state, _ = record_session(state, predictor_ndcg=0.8 if won else 0.4, baseline_ndcg=0.6,
                                      confidence=0.3 if o == "low" else 0.9, project=project, **RULES)
    return state


def trained(state: AlphaState) -> AlphaState:
    return record_training(state, swapped=True, model_version=state.model_version + 1, at="2026-01-01T00:00:00.000Z")


def test_ema_moves_by_a_tenth_and_only_on_confident_sessions():
    s = play(AlphaState(), ["W"])
    assert s.success_rate == pytest.approx(0.55)
    s = play(s, ["L"])
    assert s.success_rate == pytest.approx(0.495)
    s2 = play(s, ["low", "low", None])
    assert s2.success_rate == s.success_rate and s2.comparisons == s.comparisons
    assert s2.sessions_completed == s.sessions_completed + 3


def test_alpha_is_locked_at_one_until_all_three_exit_conditions_hold():
    s = play(AlphaState(), [None] * 10)  # data, but no training yet
    assert current_alpha(s) == 1.0 and not s.cold_start_exited
    s = play(s, ["W"] * 12)  # winning, but never trained (condition 1 missing)
    assert not s.cold_start_exited and current_alpha(s) == 1.0
    s = trained(AlphaState())
    s = play(s, ["W"] * 9)  # trained, winning, but only 9 sessions (condition 2 missing)
    assert not s.cold_start_exited
    s = play(s, ["W"])
    assert s.cold_start_exited
    losing = play(trained(AlphaState()), ["L"] * 6 + ["W"] * 4)  # 40 % over the last 10: not > 0.4
    assert not losing.cold_start_exited
    more = play(losing, ["W"])  # last 10 now 5 wins of 10
    assert more.cold_start_exited


def test_early_active_floors_then_free_alpha():
    s = play(trained(AlphaState()), ["W"] * 10)
    assert s.cold_start_exited
    s.success_rate = 0.9  # a predictor on a lucky streak
    assert current_alpha(s) == pytest.approx(0.8)  # session 1 after exit
    s = play(s, ["W"] * 9)
    assert s.sessions_since_exit == 9 and current_alpha(s) == pytest.approx(0.8)  # session 10
    s = play(s, ["W"])
    assert current_alpha(s) == pytest.approx(0.6)  # session 11
    s = play(s, ["W"] * 9)
    assert current_alpha(s) == pytest.approx(0.6)  # session 20
    s = play(s, ["W"])
    assert current_alpha(s) == pytest.approx(1 - s.success_rate)  # 21+: no cap
    assert current_alpha(s, disabled=True) == 1.0


def test_drift_reset_after_window_sessions_below_0_3():
    s = play(trained(AlphaState()), ["W"] * 10)
    s = play(s, ["L"] * 30)  # long losing run drives success below 0.3
    assert s.drift_resets >= 1 and s.retraining
    assert current_alpha(s) == 1.0
    fresh = play(trained(AlphaState()), ["W"] * 10)
    below = 0
    for i in range(60):
        before = fresh.drift_resets
        fresh = play(fresh, ["L"])
        below = below + 1 if fresh.success_rate < 0.3 or fresh.drift_resets > before else 0
        if fresh.drift_resets > before:
            assert below == 10  # exactly driftResetWindow consecutive sessions below 0.3
            assert fresh.success_rate == 0.5 and fresh.retraining
            break
    else:
        pytest.fail("no drift reset")
    done = trained(fresh)
    assert not done.retraining and current_alpha(done) == pytest.approx(max(0.6, 1 - done.success_rate))


def test_a_losing_streak_falls_back_to_the_baseline_until_a_win_or_new_weights():
    s = play(trained(AlphaState()), ["W"] * 10 + ["W"] * 20)  # exited, past the early floors
    assert s.cold_start_exited and current_alpha(s) < 0.5
    s = play(s, ["L", "L"])
    assert current_alpha(s) == pytest.approx(1 - s.success_rate) and current_alpha(s) < 1.0  # two: the EMA alone
    _, update = record_session(s, predictor_ndcg=0.4, baseline_ndcg=0.6, confidence=0.9, project="p", **RULES)
    assert "loss_streak_fallback" in update.events
    s = play(s, ["L"])
    assert current_alpha(s) == 1.0 and s.success_rate > 0.3  # long before the drift reset would act
    assert play(s, ["low", None]).loss_streak == 3  # no verdict does not end the streak
    won = play(s, ["W"])
    assert won.loss_streak == 0 and current_alpha(won) == pytest.approx(1 - won.success_rate)
    assert current_alpha(trained(s)) < 1.0  # new weights serve: the streak was the old ones'
    kw = {"enabled": True, "crash_disabled": False, "crashes_last_hour": 0, "min_training_sessions": 10}
    assert status_line(s, alpha=1.0, **kw) == "[predictor: fallback | lost 3 in a row | baseline until it wins]"


def test_per_project_success_rates_keep_the_top_five():
    s = AlphaState()
    for p in ["a", "a", "b", "c", "d", "e"]:
        s = play(s, ["W"], project=p)
    assert s.project_rates["a"] == pytest.approx(0.595)
    s = play(s, ["L"], project="f")  # sixth project evicts the least used
    assert len(s.project_rates) == 5 and "a" in s.project_rates and "f" in s.project_rates


def test_status_line_formats():
    kw = {"enabled": True, "crash_disabled": False, "crashes_last_hour": 0, "min_training_sessions": 10}
    s = play(AlphaState(), [None] * 4)
    assert status_line(s, alpha=1.0, **kw) == "[predictor: collecting | 4/10 sessions | baseline only]"
    s = trained(s)
    assert status_line(s, alpha=1.0, **kw) == "[predictor: warming | success_rate=0.50 | model_v1 | baseline only]"
    s = play(s, ["W"] * 10)
    line = status_line(s, alpha=0.8, **kw)
    assert line == f"[predictor: active | success_rate={s.success_rate:.2f} | α=0.80 | model_v1 | 14 sessions]"
    assert status_line(s, alpha=1.0, **{**kw, "crash_disabled": True, "crashes_last_hour": 3}) == \
        "[predictor: disabled | crashes=3/hr | baseline fallback]"
    s.retraining = True
    assert status_line(s, alpha=1.0, **kw) == "[predictor: retraining | drift detected | baseline fallback]"
