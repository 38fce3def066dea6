"""The scorer itself, in numpy: size, initialisation, gradients vs finite differences, a step that learns."""

from __future__ import annotations

import numpy as np
import pytest

from kenning.predictor import backprop
from kenning.predictor import constants as C
from kenning.predictor.adam import Adam
from kenning.predictor.features import Sample, collate
from kenning.predictor.lifecycle import scorer_param_count
from kenning.predictor.tokens import hash_tokens, project_slot
from kenning.predictor.weights import ScorerConfig, Weights, initial

TINY = ScorerConfig(native_dim=6, d=4, hash_buckets=16, project_slots=4, v_dim=3, seed=3)


def tiny_samples(rng: np.random.Generator, n_sessions: int = 3, n: int = 5, dims: int = 6) -> list[Sample]:
    """Sessions of `n` or `n - 1` candidates (so a batch pads), every third candidate without a
    vector (the text path), the others embedded."""
    out = []
    for s in range(n_sessions):
        vecs = [rng.normal(size=dims).astype(np.float32) if i % 3 else None for i in range(n)]
        out.append(Sample(
            session_key=f"s{s}", ids=[f"m{i}" for i in range(n - s % 2)], ctx_vec=rng.normal(size=dims).astype(np.float32),
            ctx_tokens=hash_tokens("deploy the api", 16), cand_vecs=vecs[:n - s % 2],
            cand_tokens=[hash_tokens(f"note {i} about deploy scripts", 16) for i in range(n - s % 2)],
            features=rng.normal(size=(n - s % 2, C.N_FEATURES)).astype(np.float32), project_slot=s % 4,
            labels=rng.uniform(-0.3, 1.0, size=n - s % 2).astype(np.float32), temperature=0.5,
        ))
    return out


def perturbed(config: ScorerConfig, seed: int = 3, scale: float = 0.3, dtype: type = np.float32) -> dict[str, np.ndarray]:
    """The initial weights moved away from the init's identities and zeros, as training moves them."""
    rng = np.random.default_rng(seed)
    return {k: (v + rng.normal(0, scale, v.shape)).astype(dtype) for k, v in initial(config).params.items()}


def test_default_size_matches_the_seed_budget():
    weights = initial(ScorerConfig(native_dim=384))
    count = weights.param_count()
    assert 1_050_000 < count < 1_150_000  # "about 1.1 M parameters"
    assert count == sum(a.size for a in weights.params.values()) == 1_086_485
    p = weights.params
    assert p["tok.weight"].shape == (16_384, 64)
    assert p["down.weight"].shape == (64, 384)
    assert p["project.weight"].shape == (32, 64)
    assert p["v.weight"].shape == (32, 64)
    assert p["gate.weight"].shape == (1, 1 + 32 + C.N_FEATURES)
    assert all(a.dtype == np.float32 for a in p.values())


@pytest.mark.parametrize("native_dim", [384, 768, 16])
def test_the_daemon_counts_parameters_without_building_the_model(native_dim):
    # status reports it from lifecycle.scorer_param_count: no arrays to allocate for a count
    assert scorer_param_count(native_dim) == sum(a.size for a in initial(ScorerConfig(native_dim=native_dim)).params.values())


def test_same_seed_same_weights_other_seed_other_weights():
    a = initial(ScorerConfig(native_dim=8, seed=1)).params
    b = initial(ScorerConfig(native_dim=8, seed=1)).params
    c = initial(ScorerConfig(native_dim=8, seed=2)).params
    assert all(np.array_equal(a[k], b[k]) for k in a)
    for name in ("down.weight", "tok.weight", "project.weight", "when.bias", "v.weight", "gate.weight"):
        assert not np.array_equal(a[name], c[name]), name


def test_the_initialisation_is_torchs_distributions_and_the_prior():
    config = ScorerConfig(native_dim=384, seed=4)
    p = initial(config).params
    d = config.d
    for layer, fan_in in (("down", 384), ("when", 7), ("v", d)):  # nn.Linear: U(±1/√fan_in)
        bound = 1 / np.sqrt(fan_in)
        for name in (f"{layer}.weight", f"{layer}.bias"):
            assert np.abs(p[name]).max() <= bound and np.abs(p[name]).max() > 0.8 * bound, name
    assert abs(float(p["down.weight"].std()) - 1 / np.sqrt(3 * 384)) < 0.002  # uniform's std
    assert abs(float(p["tok.weight"].std()) - 0.1) < 0.002 and abs(float(p["tok.weight"].mean())) < 0.002
    assert abs(float(p["project.weight"].std()) - 0.1) < 0.02
    for layer in ("q", "k"):  # Q = K = I
        assert np.array_equal(p[f"{layer}.weight"], np.eye(d, dtype=np.float32))
        assert not p[f"{layer}.bias"].any()
    for norm in ("ln_emb", "ln_text"):
        assert (p[f"{norm}.weight"] == 1).all() and not p[f"{norm}.bias"].any()
    gate = p["gate.weight"][0]
    assert gate[0] == 1.0 and not p["gate.bias"].any()
    assert gate[-len(C.HISTORY_PRIOR):].tolist() == list(C.HISTORY_PRIOR)
    assert 0.02 < float(gate[1:-len(C.HISTORY_PRIOR)].std()) < 0.09  # N(0, 0.05) elsewhere
    no_prior = initial(ScorerConfig(native_dim=8, n_features=12)).params["gate.weight"][0]
    assert no_prior[0] == 1.0 and not set(C.HISTORY_PRIOR[3:]) & set(no_prior[-4:].tolist())


def test_an_untrained_scorer_ranks_by_context_similarity():
    config = ScorerConfig(native_dim=384, n_features=12, seed=0)  # no history prior: attention alone
    weights = initial(config)
    rng = np.random.default_rng(0)
    ctx = rng.normal(size=384).astype(np.float32)
    n = 8
    similar = [(ctx * (1 - a) + rng.normal(size=384) * a).astype(np.float32) for a in np.linspace(0.05, 1.0, n)]
    sample = Sample(session_key="s", ids=[f"m{i}" for i in range(n)], ctx_vec=ctx, ctx_tokens=[], cand_vecs=similar,
                    cand_tokens=[[] for _ in range(n)], features=np.zeros((n, 12), np.float32), project_slot=0)
    scores = weights.score(sample)
    assert np.argsort(-scores)[:3].tolist() == [0, 1, 2]  # the closest to the context first
    assert scores[0] > scores[-1] + 0.5


def test_hash_trick_is_stable_and_bounded():
    tokens = hash_tokens("Run ruff before committing; ruff!", 16_384)
    assert tokens == hash_tokens("run RUFF before committing ruff", 16_384)
    assert len(tokens) == 5 and tokens[1] == tokens[4]
    assert all(0 <= t < 16_384 for t in tokens)
    assert project_slot(None) == 0 and project_slot("kenning") == project_slot("kenning")


def test_gradients_match_finite_differences():
    """float64: each parameter tensor's gradient (text path, both layer norms, the tables, the gate...)
    against central differences of the loss, at entries the batch reaches."""
    params = perturbed(TINY, dtype=np.float64)
    samples = tiny_samples(np.random.default_rng(0))
    samples[0].judged = np.array([True, True, False, True, True])
    batch = collate(samples, TINY.native_dim)
    weight = np.array([1.0, 0.5, 2.0])
    keep = backprop.dropout_keep(np.random.default_rng(3), (*batch.cand_has_emb.shape, TINY.d), 0.5, np.dtype(np.float64))

    def loss_fn() -> float:
        return backprop.loss_and_grads(params, TINY, batch, weight, keep)[0]

    _, grads = backprop.loss_and_grads(params, TINY, batch, weight, keep)
    assert set(grads) == set(params)
    eps = 1e-6
    rng = np.random.default_rng(1)
    checked: dict[str, int] = {}
    for name, param in params.items():
        grad = grads[name]
        assert grad is not None and grad.shape == param.shape and grad.dtype == np.float64, name
        flat, gflat = param.reshape(-1), grad.reshape(-1)
        used = np.flatnonzero(gflat).tolist() or [0]
        for idx in rng.choice(used, size=min(4, len(used)), replace=False):
            orig = flat[idx]
            flat[idx] = orig + eps
            up = loss_fn()
            flat[idx] = orig - eps
            down = loss_fn()
            flat[idx] = orig
            numeric = (up - down) / (2 * eps)
            assert abs(numeric - gflat[idx]) <= 1e-7 + 1e-5 * abs(numeric), (name, idx, numeric, gflat[idx])
            checked[name] = checked.get(name, 0) + 1
    assert set(checked) == set(params) and sum(checked.values()) >= 60  # every parameter tensor was probed
    assert all(np.abs(g).max() > 0 for g in grads.values() if g is not None)


def test_one_training_step_lowers_the_loss_on_a_fixed_batch():
    config = ScorerConfig(native_dim=6, d=8, hash_buckets=64, seed=0)
    params = {k: v.copy() for k, v in initial(config).params.items()}
    batch = collate(tiny_samples(np.random.default_rng(2), n_sessions=4, n=8), 6)
    optimizer = Adam(params, lr=1e-2)
    before, grads = backprop.loss_and_grads(params, config, batch)
    optimizer.step(grads)
    after, _ = backprop.loss_and_grads(params, config, batch)
    assert after < before
    for _ in range(30):
        optimizer.step(backprop.loss_and_grads(params, config, batch)[1])
    assert backprop.loss_and_grads(params, config, batch)[0] < 0.5 * before


def test_the_training_forward_in_eval_is_the_sidecars_score_and_padding_does_not_change_it():
    params = perturbed(TINY)
    weights = Weights(TINY, params)
    samples = tiny_samples(np.random.default_rng(4))
    samples[2].ctx_vec = None  # a context on the text path too
    padded, _ = backprop.forward(params, TINY, collate(samples, TINY.native_dim))
    alone, _ = backprop.forward(params, TINY, collate([samples[1]], TINY.native_dim))
    n = len(samples[1].ids)
    assert n < padded.shape[1]  # samples[1] is padded in the batch
    np.testing.assert_allclose(alone[0, :n], padded[1, :n], rtol=1e-5, atol=1e-6)
    for i, sample in enumerate(samples):
        m = len(sample.ids)
        np.testing.assert_allclose(padded[i, :m], weights.score(sample), rtol=1e-5, atol=1e-5)


def test_loss_weights_sessions_and_skips_unjudged_candidates():
    """Recency weights make a weighted mean of the sessions' KL; an unjudged candidate (Sample.judged
    False) takes no part in either softmax."""
    from kenning.predictor.features import recency_weight

    assert recency_weight(0, 25.0) == 1.0 and recency_weight(25, 25.0) == 0.5 and recency_weight(40, None) == 1.0
    samples = tiny_samples(np.random.default_rng(0))
    batch = collate(samples, TINY.native_dim)
    scores, _ = backprop.forward(perturbed(TINY), TINY, batch)

    def kl(s, labels, mask, t, w=None):
        return backprop.listnet_kl(s, labels, mask, t, w)[0]

    each = [kl(scores[i:i + 1], batch.labels[i:i + 1], batch.mask[i:i + 1], batch.temperature[i:i + 1])
            for i in range(len(samples))]
    w = np.array([1.0, 0.5, 0.25], np.float32)
    weighted = kl(scores, batch.labels, batch.mask, batch.temperature, w)
    assert weighted == pytest.approx(sum(x * float(y) for x, y in zip(each, w)) / float(w.sum()), rel=1e-5)
    assert weighted != pytest.approx(float(np.mean(each)), rel=1e-3)
    samples[0].judged = np.array([True, True, True, True, False])
    masked = collate(samples, TINY.native_dim)
    assert not masked.mask[0, 4] and masked.mask[2, 4]
    moved = masked.labels.copy()
    moved[0, 4] = 99.0  # an unjudged label cannot change the loss
    assert kl(scores, moved, masked.mask, masked.temperature) == pytest.approx(
        kl(scores, masked.labels, masked.mask, masked.temperature))
    _, dscores = backprop.listnet_kl(scores, masked.labels, masked.mask, masked.temperature)
    assert dscores[0, 4] == 0 and dscores[1, 4] == 0  # unjudged, padding: no gradient
    assert (dscores[masked.mask] != 0).all()


def test_candidate_dropout_acts_in_training_only():
    """Training drops the candidates' encodings (CANDIDATE_DROPOUT: the content path must not carry
    every memory's usefulness alone), from a seeded generator; scoring (eval: no mask) is
    deterministic. The setting is part of the saved config; one saved before it existed loads with
    the default."""
    assert C.CANDIDATE_DROPOUT > 0 and ScorerConfig().dropout == C.CANDIDATE_DROPOUT
    batch = collate(tiny_samples(np.random.default_rng(5)), TINY.native_dim)
    params = perturbed(TINY)
    shape, f32 = (*batch.cand_has_emb.shape, TINY.d), np.dtype(np.float32)
    rng = np.random.default_rng(0)
    first_keep, second_keep = backprop.dropout_keep(rng, shape, 0.5, f32), backprop.dropout_keep(rng, shape, 0.5, f32)
    assert first_keep is not None and second_keep is not None
    assert set(np.unique(first_keep).tolist()) == {0.0, 2.0} and 0.3 < float((first_keep == 0).mean()) < 0.7
    first, _ = backprop.forward(params, TINY, batch, first_keep)
    second, _ = backprop.forward(params, TINY, batch, second_keep)
    assert not np.allclose(first[batch.mask], second[batch.mask])  # a fresh mask per pass
    again = backprop.dropout_keep(np.random.default_rng(0), shape, 0.5, f32)
    assert np.array_equal(again, first_keep)  # same seed, same masks
    assert backprop.dropout_keep(rng, shape, 0.0, f32) is None  # dropout 0: no mask
    eval_a, _ = backprop.forward(params, TINY, batch)
    eval_b, _ = backprop.forward(params, TINY, batch)
    assert np.array_equal(eval_a, eval_b)
    old = {k: v for k, v in TINY.to_dict().items() if k != "dropout"}
    assert ScorerConfig.from_dict(old).dropout == C.CANDIDATE_DROPOUT
    assert ScorerConfig.from_dict(TINY.to_dict()) == TINY
