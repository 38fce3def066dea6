"""Validation gates: every gate must pass; the top-5 overlap gate guards against forgetting."""

from __future__ import annotations

from kenning.predictor.train import run_gates


def metrics(overlap: float, ndcg_delta: float, variance: float = 0.1) -> dict[str, float]:
    return {"canary_topk_overlap": overlap, "canary_ndcg_delta": ndcg_delta, "canary_score_variance": variance}


def test_stable_retrain_passes():
    gates = run_gates(True, metrics(0.8, -0.05), previous_trained=True)
    assert gates["passed"] and gates["topk_overlap"] is True


def test_churn_that_ranks_worse_is_rejected_as_forgetting():
    gates = run_gates(True, metrics(0.2, -0.01), previous_trained=True)
    assert gates["topk_overlap"] is False and not gates["passed"]


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
