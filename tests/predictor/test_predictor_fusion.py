"""RRF with α, NDCG@10 over the shared evaluation pool, exploration."""

from __future__ import annotations

import math
import random

import pytest

from kenning.predictor.fusion import (PredictorScores, compare, explore, fts_overlap, ndcg_at_k, own_order, rrf_fuse,
                                     unseen_of)


def test_rrf_formula_with_missing_rank_n_plus_one():
    fused = {f.memory_id: f for f in rrf_fuse(["a", "b", "c"], ["c", "d"], alpha=0.25, k=12)}
    n = 4  # union of candidates
    assert fused["a"].final_score == pytest.approx(0.25 / 13 + 0.75 / (12 + n + 1))
    assert fused["d"].final_score == pytest.approx(0.25 / (12 + n + 1) + 0.75 / 14)
    assert fused["c"].final_score == pytest.approx(0.25 / 15 + 0.75 / 13)
    assert fused["d"].baseline_rank is None and fused["d"].predictor_rank == 2


def test_alpha_one_reproduces_the_baseline_and_zero_the_predictor():
    baseline, predictor = ["a", "b", "c", "d"], ["d", "c", "b", "a"]
    assert [f.memory_id for f in rrf_fuse(baseline, predictor, 1.0)] == baseline
    assert [f.memory_id for f in rrf_fuse(baseline, predictor, 0.0)] == predictor
    assert [f.memory_id for f in rrf_fuse(baseline, None, 0.3)] == baseline  # no predictor: baseline


def test_sources_reflect_which_ranker_put_it_in_its_top_k():
    fused = {f.memory_id: f.source for f in rrf_fuse(["a", "b", "c"], ["b", "c", "a"], 0.5, top_k=1)}
    assert fused == {"a": "effective", "b": "predictor", "c": "effective"}
    both = {f.memory_id: f.source for f in rrf_fuse(["a", "b"], ["a", "b"], 0.5, top_k=1)}
    assert both["a"] == "both"


def test_ndcg_known_values():
    rel = {"a": 1.0, "b": 0.5, "c": 0.0}
    assert ndcg_at_k(["a", "b", "c"], rel) == pytest.approx(1.0)
    dcg = 0.0 / 1 + 0.5 / math.log2(3) + 1.0 / 2
    idcg = 1.0 + 0.5 / math.log2(3)
    assert ndcg_at_k(["c", "b", "a"], rel) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(["x"], {"x": -0.3}) == 0.0  # negative labels carry no gain


def test_comparison_uses_the_union_pool_and_the_same_labels():
    baseline = [f"b{i}" for i in range(12)]
    predictor = ["b11", "p1"] + [f"b{i}" for i in range(10)]
    injected = ["b0", "b1", "b11"]
    relevance = {"b11": 1.0, "p1": 0.6, "b0": 0.1}
    cmp = compare(baseline, predictor, injected, relevance)
    assert set(cmp.pool) == set(baseline[:10]) | set(predictor[:10]) | set(injected)
    assert cmp.predictor_won and cmp.margin == pytest.approx(cmp.predictor_ndcg - cmp.baseline_ndcg)
    assert cmp.predictor_ndcg == pytest.approx(1.0)


def test_a_candidate_the_predictor_never_saw_keeps_its_baseline_rank():
    baseline, predictor = ["new", "a", "b", "c"], ["a", "b", "c", "new"]
    assert [f.memory_id for f in rrf_fuse(baseline, predictor, 0.2)][-1] == "new"  # buried by the model
    kept = rrf_fuse(baseline, predictor, 0.2, unseen={"new"})
    assert [f.memory_id for f in kept] == ["new", "a", "b", "c"]
    assert kept[0].predictor_rank == 4  # the model's own rank is still what is recorded
    assert [f.memory_id for f in rrf_fuse(baseline, predictor, 0.2, unseen={"elsewhere"})][-1] == "new"


def test_exploration_swaps_the_last_slot_for_the_biggest_disagreement():
    fused = rrf_fuse(["a", "b", "c", "d", "e"], ["e", "a", "b", "c", "d"], alpha=0.9, top_k=2)

    class Always(random.Random):
        def random(self):  # noqa: D401 - deterministic draw
            return 0.0

    out = explore(fused, 2, 0.05, Always(), enabled=True)
    assert out[1].memory_id == "e" and out[1].source == "exploration"
    assert out[1].final_score == fused[1].final_score
    assert explore(fused, 2, 0.05, Always(), enabled=False) == fused  # cold start: off
    assert explore(fused, 2, 0.0, Always(), enabled=True) == fused  # rate 0: off


def test_fts_overlap_share():
    assert fts_overlap(["a", "b"], {"a": 2}) == 0.5
    assert fts_overlap([], {}) is None


def test_comparison_leaves_out_candidates_whose_label_is_unknown():
    """A condensed list: a memory nobody saw this session (labels.py "unknown") is no evidence
    against the ranking that put it on top."""
    baseline = ["u", "a", "b", "c"]
    predictor = ["a", "b", "c", "u"]
    relevance = {"u": 0.0, "a": 0.0, "b": 0.9, "c": 0.0}
    full = compare(baseline, predictor, ["a", "b"], relevance)
    condensed = compare(baseline, predictor, ["a", "b"], relevance, unjudged={"u"})
    assert "u" in full.pool and "u" not in condensed.pool
    assert full.predictor_won and not condensed.predictor_won  # b is 3rd vs 2nd → 2nd vs 2nd: a tie
    assert condensed.baseline_ndcg == pytest.approx(condensed.predictor_ndcg)


def test_a_session_with_nothing_shown_to_be_wanted_gives_no_verdict():
    baseline, predictor = ["a", "b", "c"], ["c", "b", "a"]
    for relevance in ({"a": 0.0, "b": -0.3}, {"a": 0.0, "z": 1.0}):  # nothing positive in the pool
        cmp = compare(baseline, predictor, ["a"], relevance)
        assert not cmp.verdict and cmp.margin == 0 and not cmp.predictor_won  # a tie, not a loss
    assert compare(baseline, predictor, ["a"], {"c": 0.5}).verdict


def test_a_session_without_a_verdict_leaves_the_ema_alone():
    from kenning.predictor.alpha import AlphaState, record_session
    state = AlphaState(success_rate=0.7)
    kw = dict(confidence=0.9, project="p", min_training_sessions=10, drift_reset_window=10)
    after, update = record_session(state, predictor_ndcg=None, baseline_ndcg=None, no_evidence=True, **kw)
    assert after.success_rate == 0.7 and after.comparisons == 0 and not update.ema_updated
    assert update.events == ["ema_skip:no_evidence"] and after.sessions_completed == 1
    counted, _ = record_session(state, predictor_ndcg=0.2, baseline_ndcg=0.5, **kw)
    assert counted.success_rate < 0.7 and counted.comparisons == 1


def test_the_predictors_own_order_keeps_an_unseen_memory_at_the_baselines_place():
    """fusion.own_order, what the interleaving drafts from (issue 32): the model's score orders only
    what it has seen; an unseen memory keeps its place in the baseline's order of the scored ids."""
    scores = {"old1": 0.9, "old2": 0.8, "old3": 0.7, "new1": 0.1, "new2": 0.05}
    baseline = ["new1", "new2", "gone", "old3", "old2", "old1"]  # 'gone' was not scored: no place
    assert own_order(scores, baseline) == ["old1", "old2", "old3", "new1", "new2"]  # nothing unseen: by score
    assert own_order(scores, baseline, {"new1", "new2"}) == ["new1", "new2", "old1", "old2", "old3"]
    assert own_order(scores, baseline, {"new2"}) == ["old1", "new2", "old2", "old3", "new1"]
    # an unseen id the baseline does not rank is ordered by its score; equal scores by id
    assert own_order({"a": 0.5, "b": 0.5, "x": 0.9}, ["b", "a"], {"x", "b"}) == ["b", "x", "a"]
    assert unseen_of(PredictorScores(scores, unseen=["new1"])) == {"new1"} and unseen_of(scores) == frozenset()


def test_a_memory_created_after_the_models_training_data_is_unseen():
    """scoring._unseen: no history at all, or created after the newest session the serving model
    learned from (alpha.AlphaState.trained_through, from the sidecar's train_from_db answer)."""
    from kenning.predictor.alpha import AlphaState, record_training
    from kenning.predictor.context import Candidate
    from kenning.predictor.history import NO_HISTORY
    from kenning.predictor.scoring import _unseen

    state = record_training(AlphaState(), swapped=True, model_version=1, at="2026-05-01T00:00:00.000Z",
                            trained_through="2026-04-01T10:00:00.000Z")
    assert state.trained_through == "2026-04-01T10:00:00.000Z"
    seen = [0.0] * 12 + [0.1, 0.2, 0.8, 1.0, 0.5]
    params = {"candidate_ids": ["old", "new", "blank"],
              "candidate_features": [seen, seen, [0.0] * 12 + list(NO_HISTORY)]}
    cands = [Candidate(id="old", created_at="2026-03-01T00:00:00Z"),
             Candidate(id="new", created_at="2026-04-01T11:00:00Z"),
             Candidate(id="blank", created_at="2026-03-01T00:00:00Z")]
    assert _unseen(params, cands, state.trained_through) == ["new", "blank"]
    assert _unseen(params, cands, None) == ["blank"]  # nothing trained yet: history alone decides
