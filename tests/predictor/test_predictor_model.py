"""The scorer itself: size, determinism, gradients vs finite differences, a step that learns."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kenning.predictor import constants as C
from kenning.predictor.features import Sample, collate
from kenning.predictor.lifecycle import scorer_param_count
from kenning.predictor.model import CrossAttentionScorer, ScorerConfig, hash_tokens, listnet_kl, project_slot

TINY = ScorerConfig(native_dim=6, d=4, hash_buckets=16, project_slots=4, v_dim=3, seed=3)


def tiny_samples(rng: np.random.Generator, n_sessions: int = 3, n: int = 5, dims: int = 6) -> list[Sample]:
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


def test_default_size_matches_the_seed_budget():
    model = CrossAttentionScorer(ScorerConfig(native_dim=384))
    count = model.param_count()
    assert 1_050_000 < count < 1_150_000  # "about 1.1 M parameters"
    assert model.tok.weight.shape == (16_384, 64)
    assert model.down.weight.shape == (64, 384)
    assert model.project.weight.shape == (32, 64)
    assert model.v.weight.shape == (32, 64)
    assert model.gate.weight.shape == (1, 1 + 32 + C.N_FEATURES)


@pytest.mark.parametrize("native_dim", [384, 768, 16])
def test_the_daemon_counts_parameters_without_building_the_model(native_dim):
    # status reports it from lifecycle.scorer_param_count so the daemon never imports torch
    assert scorer_param_count(native_dim) == CrossAttentionScorer(ScorerConfig(native_dim=native_dim)).param_count()


def test_same_seed_same_weights_other_seed_other_weights():
    a = CrossAttentionScorer(ScorerConfig(native_dim=8, seed=1)).state_dict()
    b = CrossAttentionScorer(ScorerConfig(native_dim=8, seed=1)).state_dict()
    c = CrossAttentionScorer(ScorerConfig(native_dim=8, seed=2)).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_hash_trick_is_stable_and_bounded():
    tokens = hash_tokens("Run ruff before committing; ruff!", 16_384)
    assert tokens == hash_tokens("run RUFF before committing ruff", 16_384)
    assert len(tokens) == 5 and tokens[1] == tokens[4]
    assert all(0 <= t < 16_384 for t in tokens)
    assert project_slot(None) == 0 and project_slot("kenning") == project_slot("kenning")


def test_gradients_match_finite_differences():
    torch.manual_seed(0)
    model = CrossAttentionScorer(TINY).double().eval()  # eval: dropout off, the loss is a function
    batch = collate(tiny_samples(np.random.default_rng(0)), TINY.native_dim)
    for name in ("ctx_emb", "cand_emb", "features", "labels", "temperature"):
        setattr(batch, name, getattr(batch, name).double())

    def loss_fn() -> torch.Tensor:
        return listnet_kl(model(batch), batch.labels, batch.mask, batch.temperature)

    model.zero_grad()
    loss_fn().backward()
    eps = 1e-6
    rng = np.random.default_rng(1)
    checked = 0
    for name, param in model.named_parameters():
        grad = param.grad
        if grad is None:
            continue
        flat = param.data.view(-1)
        used = [int(i) for i in torch.nonzero(grad.view(-1)).view(-1)] or [0]
        for idx in rng.choice(used, size=min(4, len(used)), replace=False):
            orig = flat[idx].item()
            with torch.no_grad():
                flat[idx] = orig + eps
                up = loss_fn().item()
                flat[idx] = orig - eps
                down = loss_fn().item()
                flat[idx] = orig
            numeric = (up - down) / (2 * eps)
            assert abs(numeric - grad.view(-1)[idx].item()) <= 1e-6 + 1e-4 * abs(numeric), name
            checked += 1
    assert checked >= 30  # every parameter tensor (text path, layer norms, gate, ...) was probed


def test_one_training_step_lowers_the_loss_on_a_fixed_batch():
    model = CrossAttentionScorer(ScorerConfig(native_dim=6, d=8, hash_buckets=64, seed=0))
    batch = collate(tiny_samples(np.random.default_rng(2), n_sessions=4, n=8), 6)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = listnet_kl(model(batch), batch.labels, batch.mask, batch.temperature)
    opt.zero_grad()
    before.backward()
    opt.step()
    with torch.no_grad():
        after = listnet_kl(model(batch), batch.labels, batch.mask, batch.temperature)
    assert after.item() < before.item()


def test_padding_does_not_change_scores_or_loss():
    model = CrossAttentionScorer(TINY).eval()  # scoring runs in eval mode (no dropout)
    samples = tiny_samples(np.random.default_rng(4))
    alone = model(collate([samples[1]], TINY.native_dim))
    padded = model(collate(samples, TINY.native_dim))
    n = len(samples[1].ids)
    assert torch.allclose(alone[0, :n], padded[1, :n], atol=1e-6)


def test_loss_weights_sessions_and_skips_unjudged_candidates():
    """Recency weights make a weighted mean of the sessions' KL; an unjudged candidate (Sample.judged
    False) takes no part in either softmax."""
    from kenning.predictor.features import recency_weight

    assert recency_weight(0, 25.0) == 1.0 and recency_weight(25, 25.0) == 0.5 and recency_weight(40, None) == 1.0
    torch.manual_seed(0)
    model = CrossAttentionScorer(TINY)
    samples = tiny_samples(np.random.default_rng(0))
    batch = collate(samples, TINY.native_dim)
    with torch.no_grad():
        scores = model(batch)
        each = [float(listnet_kl(scores[i:i + 1], batch.labels[i:i + 1], batch.mask[i:i + 1],
                                 batch.temperature[i:i + 1])) for i in range(len(samples))]
        w = torch.tensor([1.0, 0.5, 0.25])
        weighted = float(listnet_kl(scores, batch.labels, batch.mask, batch.temperature, w))
        assert weighted == pytest.approx(sum(x * float(y) for x, y in zip(each, w)) / float(w.sum()), rel=1e-5)
        assert weighted != pytest.approx(float(np.mean(each)), rel=1e-3)
        samples[0].judged = np.array([True, True, True, True, False])
        masked = collate(samples, TINY.native_dim)
        assert not bool(masked.mask[0, 4]) and bool(masked.mask[2, 4])
        moved = masked.labels.clone()
        moved[0, 4] = 99.0  # an unjudged label cannot change the loss
        assert float(listnet_kl(scores, moved, masked.mask, masked.temperature)) == pytest.approx(
            float(listnet_kl(scores, masked.labels, masked.mask, masked.temperature)))


def test_candidate_dropout_acts_in_training_only():
    """Training drops the candidates' encodings (CANDIDATE_DROPOUT: the content path must not carry
    every memory's usefulness alone); scoring (eval mode) is deterministic and the same scores as
    a model without dropout. The setting is part of the saved config; one saved before it existed
    loads with the default."""
    assert C.CANDIDATE_DROPOUT > 0 and ScorerConfig().dropout == C.CANDIDATE_DROPOUT
    batch = collate(tiny_samples(np.random.default_rng(5)), TINY.native_dim)
    model = CrossAttentionScorer(TINY)
    plain = CrossAttentionScorer(ScorerConfig(**{**TINY.to_dict(), "dropout": 0.0}))
    plain.load_state_dict(model.state_dict())
    torch.manual_seed(0)
    model.train()
    first, second = model(batch), model(batch)
    assert not torch.allclose(first[batch.mask], second[batch.mask])  # a fresh mask per pass
    model.eval()
    plain.eval()
    assert torch.equal(model(batch), model(batch))
    assert torch.allclose(model(batch)[batch.mask], plain(batch)[batch.mask])
    plain.train()
    assert torch.equal(plain(batch), plain(batch))  # dropout 0: training passes agree too
    old = {k: v for k, v in TINY.to_dict().items() if k != "dropout"}
    assert ScorerConfig.from_dict(old).dropout == C.CANDIDATE_DROPOUT
    assert ScorerConfig.from_dict(TINY.to_dict()) == TINY
