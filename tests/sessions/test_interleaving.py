"""Team-draft interleaving (issue 32) on a scripted session: the shown set is drawn from the
baseline's and the predictor's orders, each pick credited to its ranking, the session's ratings
decide the winner and the comparison row records both rankings, the draft and the credit.

The predictor is a stand-in that follows sessions.context.SessionPredictor (it prefers the least
important memories: the opposite of the baseline); everything else is real (SQLite file, bundled
embedding model, the session-end job, predictor.session_end.SessionEnd on the same store).
"""

from __future__ import annotations

import random

import pytest

from kenning.core.events import PromptSubmitted, SessionEnded, SessionStarted
from kenning.core.config import Settings
from kenning.core.types import MemoryDraft
from kenning.predictor import alpha as A
from kenning.predictor import constants as C
from kenning.predictor.alpha import AlphaCell, AlphaState
from kenning.predictor.fusion import PredictorScores
from kenning.predictor.interleave import BASELINE, PREDICTOR, SHARED, credit, team_draft
from kenning.predictor.scoring import ContextRecorder
from kenning.predictor.session_end import Recorded, SessionEnd
from kenning.sessions.context import Deadline
from kenning.store import predictor as pstore
from tests.sessions.test_predictor_seam import StandInPredictor


class Unearned(StandInPredictor):
    """A predictor that answers but has earned nothing yet (α = 1: no influence)."""

    def alpha(self) -> float:
        return 1.0


def test_team_draft_alternates_credits_each_pick_and_is_deterministic():
    baseline = ["b1", "b2", "b3", "s", "b4"]
    predictor = ["p1", "s", "p2", "b1", "p3"]
    picks = team_draft(baseline, predictor, 6, random.Random("interleave:k1"))
    again = team_draft(baseline, predictor, 6, random.Random("interleave:k1"))
    assert picks == again  # the coin is seeded: the same session drafts the same
    assert len(picks) == 6 and len({p.memory_id for p in picks}) == 6
    teams = [p.team for p in picks]
    assert teams.count(BASELINE) == teams.count(PREDICTOR) == 3  # one pick each per round
    for i in range(0, 6, 2):  # each round: both teams, coin decides who first
        assert {teams[i], teams[i + 1]} == {BASELINE, PREDICTOR}
    # each team adds its best not yet drawn, in its own order
    assert [p.memory_id for p in picks if p.team == BASELINE] == [m for m in baseline if m in
                                                                   {p.memory_id for p in picks if p.team == BASELINE}]
    assert picks[0].memory_id in ("b1", "p1")
    # a ranking with nothing left lets the other fill the slots; never more than the slots
    short = team_draft(["a"], ["x", "y", "z"], 3, random.Random(1))
    assert [p.memory_id for p in short if p.team == PREDICTOR] == ["x", "y"] and len(short) == 3
    assert team_draft(["a", "b"], ["b", "a"], 1, random.Random(2))[0].memory_id in ("a", "b")


class Coins(random.Random):
    """A scripted coin: each round's draw in turn (< 0.5: the predictor picks first)."""

    def __init__(self, *draws: float) -> None:
        super().__init__(0)
        self.draws = list(draws)

    def random(self) -> float:
        return self.draws.pop(0)


def test_a_pick_both_rankings_would_make_is_shared_and_credited_to_neither():
    # equal rankings: the coin alone would name each pick's team; every pick is shared, no verdict
    same = team_draft(["a", "b", "c", "d"], ["a", "b", "c", "d"], 4, random.Random("interleave:k2"))
    assert [p.memory_id for p in same] == ["a", "b", "c", "d"] and {p.team for p in same} == {SHARED}
    assert credit({p.memory_id: p.team for p in same}, {"a": 1.0, "b": 1.0, "c": -0.5}).winner is None
    # the rankings differ on the second place: each ranking is credited its own choice there, the
    # round's coin (0.1: the predictor first) orders only what is shown
    picks = team_draft(["a", "b", "c", "d"], ["a", "c", "b", "d"], 4, Coins(0.9, 0.1, 0.5))
    assert [(p.memory_id, p.team) for p in picks] == [("a", SHARED), ("c", PREDICTOR), ("b", BASELINE), ("d", SHARED)]
    won = credit({p.memory_id: p.team for p in picks}, {"a": 1.0, "b": 1.0, "c": 0.8, "d": 1.0})
    assert (won.baseline, won.predictor, won.judged, won.winner) == (1.0, 0.8, 2, BASELINE)
    # one slot left for two choices: the coin says which fills it
    picks = team_draft(["a", "b", "c", "d"], ["a", "c", "b", "d"], 2, Coins(0.1, 0.9))
    assert [(p.memory_id, p.team) for p in picks] == [("a", SHARED), ("b", BASELINE)]
    picks = team_draft(["a", "b", "c", "d"], ["a", "c", "b", "d"], 2, Coins(0.1, 0.1))
    assert [(p.memory_id, p.team) for p in picks] == [("a", SHARED), ("c", PREDICTOR)]


def test_the_coin_orders_the_picks_but_never_decides_their_credit():
    # baseline [b, c, …] and predictor [c, b, …]: whichever side of the coin comes up, b is the
    # baseline's pick and c the predictor's (when the second pick was checked against the other
    # ranking only after the first was drawn, one side of the coin made one of them 'shared')
    for coin in (0.1, 0.9):
        picks = team_draft(["b", "c", "d", "e"], ["c", "b", "d", "e"], 4, Coins(coin, 0.5, 0.5))
        assert {p.memory_id: p.team for p in picks} == {"b": BASELINE, "c": PREDICTOR, "d": SHARED, "e": SHARED}


def test_credit_sums_relevance_per_team_and_a_tie_is_no_verdict():
    teams = {"a": BASELINE, "b": BASELINE, "x": PREDICTOR, "y": PREDICTOR}
    won = credit(teams, {"a": 0.0, "b": -0.6, "x": 0.9, "y": 0.0})
    assert (won.baseline, won.predictor, won.judged, won.winner) == (-0.6, 0.9, 2, PREDICTOR)
    assert credit(teams, {"a": 1.0, "x": 1.0}).winner is None
    assert credit(teams, {"x": 1.0}, unjudged={"x"}).winner is None  # an unknown label counts for nobody

    state = AlphaState(scored_sessions=20, first_training_done=True)
    after, update = A.record_session(state, predictor_ndcg=None, baseline_ndcg=None, confidence=0.9, project="p",
                                     min_training_sessions=10, drift_reset_window=10, interleaved=(0.9, -0.6))
    assert update.ema_updated and update.won is True and after.success_rate > state.success_rate
    tied, update = A.record_session(state, predictor_ndcg=None, baseline_ndcg=None, confidence=0.9, project="p",
                                    min_training_sessions=10, drift_reset_window=10, interleaved=(1.0, 1.0))
    assert not update.ema_updated and update.events == ["ema_skip:no_evidence"] and tied.success_rate == 0.5


def _seed(kenning, project: str) -> list[str]:
    """Twenty project-scope notes below the standing bar: eligible, shown only when ranked there."""
    return [r.id for r in kenning.remember_many([
        MemoryDraft(content=f"Note {i} on subsystem {chr(65 + i)}: its quirk number {i * 7} bites on reload",
                    importance=round(0.1 + i * 0.04, 2), project=project, applies="project", confidence=0.5)
        for i in range(20)])]


def _teams(kenning, key: str) -> dict[str, str]:
    rows = kenning.sessions.detail(key)["memories"]
    return {r["memory_id"]: r["team"] for r in rows if r["was_injected"] and r.get("team")}


def test_an_unearned_predictor_gets_a_bounded_draft_at_session_start(kenning, monkeypatch):
    ids = _seed(kenning, "drafted")
    monkeypatch.setattr(kenning.sessions.deps, "predictor", Unearned())
    out = kenning.sessions.session_start(SessionStarted(session_key="il-1", project="drafted",
                                                        context="subsystem quirks"),
                                         Deadline(60_000))
    assert out["predictor_used"] and not out["cut"], out
    teams = _teams(kenning, "il-1")
    # nothing is standing, so the baseline alone would show nothing: the draft adds at most the extra slots
    assert len(teams) == C.INTERLEAVE_EXTRA_SLOTS and set(out["memory_ids"]) == set(teams)
    assert sorted(teams.values()) == [BASELINE, PREDICTOR]
    by_team = {team: m for m, team in teams.items()}
    assert by_team[BASELINE] == ids[-1]  # the baseline's best: the most important
    assert by_team[PREDICTOR] == ids[0]  # the predictor's best: the least important
    assert "[predictor:" not in out["inject"]


def test_interleaving_credit_decides_the_scripted_session(kenning, settings: Settings, monkeypatch):
    ids = _seed(kenning, "credited")
    monkeypatch.setattr(kenning.sessions.deps, "predictor", StandInPredictor())  # taken at its word: full draft
    key = "il-2"
    kenning.sessions.session_start(SessionStarted(session_key=key, project="credited", context="subsystem quirks"),
                                   Deadline(60_000))
    teams = _teams(kenning, key)
    rows = {r["memory_id"]: r for r in kenning.sessions.detail(key)["memories"]}
    baseline = sorted(rows, key=lambda m: rows[m]["baseline_rank"])
    predicted = sorted(rows, key=lambda m: rows[m]["predictor_rank"])
    expected = team_draft(baseline, predicted, settings.sessions.inject_limit, random.Random(f"interleave:{key}"))
    assert teams == {p.memory_id: p.team for p in expected}  # the recorded credit is the seeded draft
    assert {BASELINE, PREDICTOR} == set(teams.values())

    # the agent finds the predictor's picks useful and the baseline's not
    ratings = {m: (0.9 if team == PREDICTOR else 0.0) for m, team in teams.items()}
    applied = kenning.sessions.feedback(key, ratings)
    assert applied["applied"] == len(ratings)
    kenning.sessions.session_end(SessionEnded(session_key=key), wait=True)

    ender = SessionEnd(settings.predictor, kenning.db, AlphaCell(AlphaState()), ContextRecorder(kenning.db))
    outcome = ender.record(key)
    assert isinstance(outcome, Recorded)
    row = pstore.comparison_for_session(kenning.db.reader(), key)
    picked_by_predictor = sum(1 for t in teams.values() if t == PREDICTOR)
    assert row["method"] == "interleave" and row["credit"] == teams and set(row["interleaved_ids"]) == set(teams)
    assert row["predictor_credit"] == pytest.approx(0.9 * picked_by_predictor) and row["baseline_credit"] == 0.0
    assert row["winner"] == "predictor" and row["predictor_won"] is True
    assert row["margin"] == pytest.approx(row["predictor_credit"] - row["baseline_credit"])
    assert outcome.update.won is True or outcome.update.events[0] == "ema_skip:low_confidence"


def test_the_prompt_pool_is_drafted_only_from_what_the_prompt_may_show():
    from kenning.sessions.prompt_rank import PoolRanking, interleave_pool

    rows = [{"memory_id": m, "baseline_rank": None, "predictor_rank": rank, "predictor_score": 1.0 / rank,
             "final_rank": rank} for rank, m in enumerate(["held", "p1", "b3", "b1"], 1)]
    ranking = PoolRanking(order=["b1", "b3", "p1", "held"], rows=rows)
    assert ranking.predictor_order == ["held", "p1", "b3", "b1"]
    baseline = ["b1", "b2", "b3", "p1"]  # past the prompt bar: 'held' is not among them
    order, teams = interleave_pool(baseline, ranking, 2, "il-3")
    again = interleave_pool(baseline, ranking, 2, "il-3")
    assert (order, teams) == again and "held" not in order and sorted(order) == sorted(baseline)
    assert teams == {"b1": BASELINE, "p1": PREDICTOR} and set(order[:2]) == {"b1", "p1"}
    assert order[2:] == ["b2", "b3"]


def test_the_first_prompt_drafts_its_slots_and_records_each_picks_team(kenning, monkeypatch):
    _seed(kenning, "prompted")
    monkeypatch.setattr(kenning.sessions.deps, "predictor", Unearned())
    key = "il-4"
    start = kenning.sessions.session_start(SessionStarted(session_key=key, project="prompted",
                                                          context="subsystem quirks"),
                                           Deadline(60_000))
    out = kenning.sessions.user_prompt_submit(PromptSubmitted(session_key=key,
                                                              prompt="which subsystem quirk bites on reload?"),
                                              Deadline(60_000))  # no stage cut on a busy machine
    assert not out["cut"], out
    rows = {r["memory_id"]: r for r in kenning.sessions.detail(key)["memories"]}
    shown = [m for m in out["memory_ids"] if m not in start["memory_ids"]]
    assert len(shown) >= 2, out
    teams = {m: rows[m]["team"] for m in shown}
    assert set(teams.values()) == {BASELINE, PREDICTOR}  # both rankings put picks in front of the agent
    assert all(rows[m]["inject_phase"] == "prompt:1" for m in shown)


class Agreeing(StandInPredictor):
    """A predictor that orders the pool as the baseline does (the most important first)."""

    def score(self, session_context, candidates):
        self.contexts.append((session_context, candidates))
        return {c.id: c.importance for c in candidates}


def test_a_session_whose_rankings_agree_records_shared_picks_and_no_verdict(kenning, settings: Settings, monkeypatch):
    _seed(kenning, "agreed")
    monkeypatch.setattr(kenning.sessions.deps, "predictor", Agreeing())
    key = "il-5"
    kenning.sessions.session_start(SessionStarted(session_key=key, project="agreed", context="subsystem quirks"),
                                   Deadline(60_000))
    teams = _teams(kenning, key)
    assert teams and set(teams.values()) == {SHARED}, teams  # shown, but the coin named no team
    kenning.sessions.feedback(key, {m: 0.9 for m in teams})
    kenning.sessions.session_end(SessionEnded(session_key=key), wait=True)
    ender = SessionEnd(settings.predictor, kenning.db, AlphaCell(AlphaState()), ContextRecorder(kenning.db))
    outcome = ender.record(key)
    assert isinstance(outcome, Recorded)
    row = pstore.comparison_for_session(kenning.db.reader(), key)
    assert row["method"] == "interleave" and row["credit"] == teams  # the draft is on record, shared picks included
    assert row["predictor_credit"] == 0.0 and row["baseline_credit"] == 0.0
    assert not outcome.update.ema_updated and outcome.update.won is None


class Unseeing(StandInPredictor):
    """The stand-in's order (the least important first), but it has seen none of the pool's `new`
    most important memories (e.g. a drift's new conventions, created after its last training)."""

    def __init__(self, new: int) -> None:
        super().__init__()
        self.new = new

    def score(self, session_context, candidates):
        unseen = sorted(candidates, key=lambda c: -c.importance)[:self.new]
        return PredictorScores(super().score(session_context, candidates), unseen=[c.id for c in unseen])


def test_a_memory_the_predictor_has_not_seen_keeps_the_baselines_place_in_the_draft(kenning, monkeypatch):
    ids = _seed(kenning, "unseen")  # importance rises with the index: the baseline's best is ids[-1]
    monkeypatch.setattr(kenning.sessions.deps, "predictor", Unseeing(new=2))
    key = "il-6"
    start = kenning.sessions.session_start(SessionStarted(session_key=key, project="unseen",
                                                          context="subsystem quirks"), Deadline(60_000))
    assert start["predictor_used"] and not start["cut"], start
    rows = {r["memory_id"]: r for r in kenning.sessions.detail(key)["memories"]}
    new = [ids[-1], ids[-2]]
    assert [rows[m]["baseline_rank"] for m in new] == [1, 2]
    assert [rows[m]["predictor_rank"] for m in new] == [20, 19]  # the model's own order is what is recorded
    teams = _teams(kenning, key)
    # but it knows nothing of the two: the draft leaves them where the baseline has them, both choose them
    assert teams[ids[-1]] == teams[ids[-2]] == SHARED, teams
    assert teams.get(ids[0]) == PREDICTOR and teams.get(ids[-3]) == BASELINE, teams  # the contest is on the rest


def test_the_prompt_pool_drafts_the_predictors_order_with_unseen_memories_at_recalls_place():
    from kenning.sessions.prompt_rank import PoolRanking, interleave_pool

    rows = [{"memory_id": m, "baseline_rank": None, "predictor_rank": rank, "predictor_score": 1.0 / rank,
             "final_rank": rank} for rank, m in enumerate(["p1", "p2", "new"], 1)]
    raw = PoolRanking(order=["new", "p1", "p2"], rows=rows)
    assert interleave_pool(["new", "b", "p1", "p2"], raw, 2, "il-7")[1] == {"new": BASELINE, "p1": PREDICTOR}
    drafted = PoolRanking(order=["new", "p1", "p2"], rows=rows, draft_order=["new", "p1", "p2"])
    assert interleave_pool(["new", "b", "p1", "p2"], drafted, 3, "il-7")[1] == {
        "new": SHARED, "b": BASELINE, "p1": PREDICTOR}
