"""Training, in numpy: ListNet KL + Adam (backprop.py, adam.py) on a copy of the serving weights,
then validation gates, then swap or discard.

    serving weights ──copy──► twin ──epochs (≤ 30 s, 80 % recent / 20 % replay)──► candidate
    gates on the canary set (all must pass):
        finite        every loss was finite
        variance      candidate's canary score variance > 0 (not collapsed)
        topk_overlap  ≥ 60 % of each canary top-5 kept vs the serving model (skipped while the
                      serving model has never been trained: nothing to forget yet). Waived
                      unless the canary NDCG fell by more than GATE_WAIVE_NDCG_TOLERANCE (0.02):
                      the gate exists to catch forgetting, which shows as a lower NDCG; in
                      measured replays (bench/predictor_sim.py) the top-5 of sessions with one
                      or two relevant memories churns among ties, and the strict rule (NDCG
                      up) kept the first model (10 sessions) serving through 15 retrains.
        ndcg_drop     canary NDCG@10 fell by ≤ 0.15 (skipped too while nothing was trained: the
                      untrained model never served, there is nothing to fall from)
    pass → the caller swaps in `result.model`; fail → `result.model` is None and the serving
    weights are untouched. No partial state is possible: the serving weights are never mutated.

The candidates' dropout draws from its own generator seeded by `TrainConfig.seed` (the epochs' order
from another): a training is reproducible from its seed, bit for bit.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from kenning.predictor import constants as C
from kenning.predictor.adam import Adam
from kenning.predictor.backprop import backward, dropout_keep, forward, listnet_kl
from kenning.predictor.constants import TrainConfig
from kenning.predictor.features import Sample, collate
from kenning.predictor.fusion import ndcg_at_k
from kenning.predictor.weights import Weights

DROPOUT_STREAM = 1  # the dropout generator's seed is (TrainConfig.seed, DROPOUT_STREAM); the epochs' is the seed


@dataclass
class TrainResult:
    swapped: bool
    model: Weights | None  # the new weights when every gate passed
    loss: float | None
    steps: int
    samples_used: int
    duration_ms: float
    canary: dict[str, float] = field(default_factory=dict)
    gates: dict[str, bool | str] = field(default_factory=dict)
    loss_curve: list[float] = field(default_factory=list)
    stopped_early: bool = False
    error: str | None = None

    def summary(self) -> dict[str, object]:
        out = {k: v for k, v in self.__dict__.items() if k != "model"}
        return out


def score_samples(weights: Weights, samples: list[Sample]) -> list[np.ndarray]:
    """Scores per sample, as the sidecar gives them (`Weights.score`: eval mode)."""
    return [weights.score(s) for s in samples]


def _top(scores: np.ndarray, ids: list[str], k: int) -> list[str]:
    order = sorted(range(len(ids)), key=lambda i: (-float(scores[i]), ids[i]))
    return [ids[i] for i in order[:k]]


def canary_metrics(
    canary: list[Sample], new_scores: list[np.ndarray], old_scores: list[np.ndarray]
) -> dict[str, float]:
    if not canary:
        return {}
    ndcg_new, ndcg_old, variances, overlaps, churned = [], [], [], [], 0
    for s, new, old in zip(canary, new_scores, old_scores):
        relevance = {i: float(v) for i, v in zip(s.ids, s.labels)} if s.labels is not None else {}
        ndcg_new.append(ndcg_at_k(_top(new, s.ids, len(s.ids)), relevance))
        ndcg_old.append(ndcg_at_k(_top(old, s.ids, len(s.ids)), relevance))
        variances.append(float(np.var(new)) if len(new) > 1 else 0.0)
        top_new, top_old = set(_top(new, s.ids, C.GATE_TOPK)), set(_top(old, s.ids, C.GATE_TOPK))
        overlaps.append(len(top_new & top_old) / max(1, min(C.GATE_TOPK, len(s.ids))))
        churned += int(top_new != top_old)
    return {
        "canary_ndcg": float(np.mean(ndcg_new)),
        "canary_ndcg_previous": float(np.mean(ndcg_old)),
        "canary_ndcg_delta": float(np.mean(ndcg_new) - np.mean(ndcg_old)),
        "canary_score_variance": float(np.mean(variances)),
        "canary_topk_overlap": float(np.mean(overlaps)),
        "canary_topk_churn": churned / len(canary),
        "canary_sessions": float(len(canary)),
    }


def run_gates(all_finite: bool, metrics: dict[str, float], previous_trained: bool) -> dict[str, bool | str]:
    """Each gate's verdict (True / False / 'skipped' / 'waived'), `passed`, and a `reason` when none could run."""
    gates: dict[str, bool | str] = {"finite": all_finite}
    if not metrics:
        gates["variance"] = False
        gates["reason"] = "no canary sessions to validate on"
        gates["passed"] = False
        return gates
    gates["variance"] = metrics["canary_score_variance"] > 0.0
    if not previous_trained:
        gates["topk_overlap"] = "skipped"
    elif metrics["canary_topk_overlap"] >= C.GATE_MIN_TOPK_OVERLAP:
        gates["topk_overlap"] = True
    elif metrics["canary_ndcg_delta"] >= -C.GATE_WAIVE_NDCG_TOLERANCE:
        gates["topk_overlap"] = "waived"
    else:
        gates["topk_overlap"] = False
    # measured against a model that never served (cold start: baseline answers), a drop means
    # nothing: with the history prior the untrained model already ranks, and a first training's
    # early steps can trail it on the canary; the first swap only has to be sane (finite, varied)
    gates["ndcg_drop"] = (metrics["canary_ndcg_delta"] >= -C.GATE_MAX_NDCG_DROP) if previous_trained else "skipped"
    gates["passed"] = all(v is True or v in ("skipped", "waived") for k, v in gates.items() if k != "passed")
    return gates


def epoch_order(n_recent: int, n_replay: int, fraction: float, rng: np.random.Generator) -> list[tuple[str, int]]:
    """One epoch: every recent session once + replay draws making up `fraction` of the mix."""
    order = [("recent", int(i)) for i in rng.permutation(n_recent)]
    if n_replay and n_recent and fraction > 0:
        extra = max(1, round(n_recent * fraction / (1.0 - fraction)))
        order += [("replay", int(i)) for i in rng.integers(0, n_replay, size=extra)]
    elif n_replay and not n_recent:
        order += [("replay", int(i)) for i in rng.permutation(n_replay)]
    return [order[i] for i in rng.permutation(len(order))]


def _epochs(twin: dict[str, np.ndarray], weights: Weights, optimizer: Adam, cfg: TrainConfig,
            rng: np.random.Generator, dropout: np.random.Generator, pools: dict[str, list[Sample]],
            scale: dict[str, float], curve: list[float], started: float) -> tuple[int, bool, bool]:
    """The epochs of one training (appends each epoch's mean loss to `curve`); `twin` (the
    arrays of `weights`) is updated in place. Returns (steps, all losses finite, stopped by the time cap)."""
    config = weights.config
    steps, all_finite, stopped = 0, True, False
    for _ in range(cfg.epochs):
        order = epoch_order(len(pools["recent"]), len(pools["replay"]), cfg.replay_fraction, rng)
        losses: list[float] = []
        for start in range(0, len(order), cfg.batch_sessions):
            chunk = order[start:start + cfg.batch_sessions]
            batch = collate([pools[p][i] for p, i in chunk], config.native_dim)
            weight = np.array([pools[p][i].weight * scale[p] for p, i in chunk], np.float32)
            keep = dropout_keep(dropout, (*batch.cand_has_emb.shape, config.d), config.dropout, np.dtype(np.float32))
            scores, tape = forward(twin, config, batch, keep)
            loss, dscores = listnet_kl(scores, batch.labels, batch.mask, batch.temperature, weight)
            if not math.isfinite(loss):
                all_finite = False
                break
            optimizer.step(backward(twin, config, batch, tape, dscores))
            steps += 1
            losses.append(loss)
            if time.monotonic() - started > cfg.time_cap_s:
                stopped = True
                break
        if losses:
            curve.append(float(np.mean(losses)))
        if stopped or not all_finite:
            break
    return steps, all_finite, stopped


def train(
    serving: Weights, recent: list[Sample], *, replay: list[Sample] | None = None,
    canary: list[Sample] | None = None, previous_trained: bool = False, config: TrainConfig | None = None,
) -> TrainResult:
    """Fine-tune a copy of `serving`, validate it, and return it only if every gate passes."""
    cfg = config or TrainConfig()
    replay = replay or []
    canary = canary or []
    started = time.monotonic()
    if not recent and not replay:
        return TrainResult(False, None, None, 0, 0, 0.0, error="no usable training sessions")
    twin = {name: np.array(array, np.float32, copy=True) for name, array in serving.params.items()}
    optimizer = Adam(twin, lr=cfg.lr)  # torch.optim.Adam's update (adam.py)
    rng = np.random.default_rng(cfg.seed)
    dropout = np.random.default_rng([cfg.seed, DROPOUT_STREAM])
    pools = {"recent": recent, "replay": replay}
    # recent weights rescaled to mean 1, so the replay share stays the seed's ~20 %
    scale = {"recent": len(recent) / max(1e-9, sum(s.weight for s in recent)), "replay": 1.0}
    curve: list[float] = []
    steps, all_finite, stopped = _epochs(twin, serving, optimizer, cfg, rng, dropout, pools, scale, curve, started)
    all_finite = all_finite and all(math.isfinite(x) for x in curve) and all(
        bool(np.isfinite(p).all()) for p in twin.values())
    trained = Weights(serving.config, twin)
    metrics = canary_metrics(canary, score_samples(trained, canary), score_samples(serving, canary)) if all_finite else {}
    gates = run_gates(all_finite, metrics, previous_trained)
    passed = bool(gates.get("passed"))
    return TrainResult(
        swapped=passed, model=trained if passed else None, loss=curve[-1] if curve else None,
        steps=steps, samples_used=len(recent) + len(replay),
        duration_ms=(time.monotonic() - started) * 1000.0, canary=metrics, gates=gates,
        loss_curve=curve, stopped_early=stopped,
        error=None if passed else "validation gates failed: " + ", ".join(
            k for k, v in gates.items() if v is False and k != "passed"),
    )
