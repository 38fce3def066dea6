"""Validation gates: every gate must pass; the top-5 overlap gate guards against forgetting."""

from __future__ import annotations

import numpy as np

from kenning.predictor import constants as C
from kenning.predictor.features import FEATURE_NAMES, Sample
from kenning.predictor.tokens import hash_tokens
from kenning.predictor.train import TrainConfig, run_gates, train
from kenning.predictor.weights import ScorerConfig, initial

USEFUL_PREV = FEATURE_NAMES.index("useful_prev_session")


def metrics(overlap: float, ndcg_delta: float, variance: float = 0.1) -> dict[str, float]:
    return {"canary_topk_overlap": overlap, "canary_ndcg_delta": ndcg_delta, "canary_score_variance": variance}


def test_stable_retrain_passes():
    gates = run_gates(True, metrics(0.8, -0.05), previous_trained=True)
    assert gates["passed"] and gates["topk_overlap"] is True


def test_churn_that_ranks_worse_is_rejected_as_forgetting():
    gates = run_gates(True, metrics(0.2, -0.03), previous_trained=True)
    assert gates["topk_overlap"] is False and not gates["passed"]


def test_churn_within_the_noise_of_the_canary_is_waived():
    for delta in (0.0, -C.GATE_WAIVE_NDCG_TOLERANCE):
        gates = run_gates(True, metrics(0.2, delta), previous_trained=True)
        assert gates["topk_overlap"] == "waived" and gates["passed"]


def test_churn_that_ranks_the_canary_better_is_waived():
    gates = run_gates(True, metrics(0.2, 0.04), previous_trained=True)
    assert gates["topk_overlap"] == "waived" and gates["passed"]


def test_first_model_skips_overlap_but_not_other_gates():
    assert run_gates(True, metrics(0.0, 0.0), previous_trained=False)["topk_overlap"] == "skipped"
    first = run_gates(True, metrics(0.0, -0.3), previous_trained=False)  # nothing served yet
    assert first["ndcg_drop"] == "skipped" and first["passed"]
    assert not run_gates(False, metrics(0.9, 0.0), previous_trained=True)["passed"]
    assert not run_gates(True, metrics(0.9, -0.2), previous_trained=True)["passed"]
    assert not run_gates(True, metrics(0.9, 0.0, variance=0.0), previous_trained=True)["passed"]


def _history_world(rng, first: int, count: int, invert: bool = False) -> list:
    """Sessions whose useful memories are the ones useful in the project's previous session
    (the useful_prev_session feature); `invert` labels every candidate the other way."""
    out = []
    for s in range(first, first + count):
        n = 12
        features = rng.normal(0, 0.3, size=(n, C.N_FEATURES)).astype(np.float32)
        useful = rng.permutation(n) < 4
        features[:, USEFUL_PREV] = useful.astype(np.float32)
        labels = (useful != invert).astype(np.float32)
        out.append(Sample(
            session_key=f"s{s}", ids=[f"m{s}-{i}" for i in range(n)], ctx_vec=rng.normal(size=6).astype(np.float32),
            ctx_tokens=hash_tokens("continuing work", 16), cand_vecs=[rng.normal(size=6).astype(np.float32) for _ in range(n)],
            cand_tokens=[[] for _ in range(n)], features=features, project_slot=0, labels=labels, temperature=0.5,
        ))
    return out


def test_a_retrain_on_inverted_labels_is_refused_on_a_trusted_canary():
    """The gates' job, end to end in `train`: a serving model that learned the user's pattern, a
    retrain on the same pattern labelled backwards (a broken judge), a canary of trusted sessions
    neither trained on: the retrain ranks the canary worse and is refused; the serving model stays."""
    rng = np.random.default_rng(0)
    trusted, canary = _history_world(rng, 0, 40), _history_world(rng, 40, 10)
    prior = initial(ScorerConfig(native_dim=6, d=4, hash_buckets=16, project_slots=4, v_dim=3, seed=3))
    first = train(prior, trusted, canary=canary, config=TrainConfig(epochs=20))
    assert first.swapped and first.canary["canary_ndcg"] > 0.9  # it learned the pattern
    serving = first.model
    before = {k: v.copy() for k, v in serving.params.items()}
    broken = train(serving, _history_world(rng, 50, 40, invert=True), canary=canary, previous_trained=True,
                   config=TrainConfig(epochs=40, lr=0.03))  # long enough to learn the inversion
    assert not broken.swapped and broken.model is None
    assert broken.canary["canary_ndcg_delta"] < -0.15 and broken.gates["ndcg_drop"] is False
    assert "validation gates failed" in broken.error
    assert all(np.array_equal(before[k], v) for k, v in serving.params.items())  # never touched
