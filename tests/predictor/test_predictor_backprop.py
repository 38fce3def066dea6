"""The numpy training pass (kenning.predictor.backprop) against the torch model it replaced
(tests/predictor/torch_reference.py): the same scores, loss and autograd gradients on the same weights
and batch — text and embedding paths, padding, unjudged candidates, session weights, a dropout mask."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kenning.predictor import backprop
from kenning.predictor.features import collate
from kenning.predictor.weights import ScorerConfig, Weights
from tests.predictor.test_predictor_model import perturbed, tiny_samples
from tests.predictor.torch_reference import Batch, CrossAttentionScorer, listnet_kl

CFG = ScorerConfig(native_dim=6, d=8, hash_buckets=16, project_slots=4, v_dim=3, seed=3)


def batch_of(kind: str):
    samples = tiny_samples(np.random.default_rng(1), n_sessions=4)
    samples[0].judged = np.array([True, False, True, True, True])  # an unjudged candidate
    samples[3].ctx_vec = None  # one context on the text path
    if kind == "embedded":  # every item embedded and no padding: the text path does not run
        samples = [s for s in samples if len(s.ids) == 5]
        rng = np.random.default_rng(9)
        for s in samples:
            s.ctx_vec = rng.normal(size=6).astype(np.float32)
            s.cand_vecs = [rng.normal(size=6).astype(np.float32) for _ in s.ids]
    return collate(samples, CFG.native_dim)


@pytest.mark.parametrize("kind", ["mixed", "embedded"])
@pytest.mark.parametrize("dropout", [False, True])
def test_gradients_equal_torch_autograd(kind, dropout):
    params = perturbed(CFG)
    batch = batch_of(kind)
    weight = np.linspace(0.5, 2.0, len(batch.mask)).astype(np.float32)
    keep = (backprop.dropout_keep(np.random.default_rng(2), (*batch.mask.shape, CFG.d), 0.5, np.dtype(np.float32))
            if dropout else None)
    scores, tape = backprop.forward(params, CFG, batch, keep)
    loss, dscores = backprop.listnet_kl(scores, batch.labels, batch.mask, batch.temperature, weight)
    grads = backprop.backward(params, CFG, batch, tape, dscores)

    model = CrossAttentionScorer.from_weights(Weights(CFG, params)).train()
    tb = Batch.of(batch)
    t_scores = model(tb, keep=torch.from_numpy(keep) if keep is not None else torch.ones(*batch.mask.shape, CFG.d))
    t_loss = listnet_kl(t_scores, tb.labels, tb.mask, tb.temperature, torch.from_numpy(weight))
    t_loss.backward()

    np.testing.assert_allclose(scores[batch.mask], t_scores.detach().numpy()[batch.mask], rtol=1e-5, atol=1e-5)
    assert loss == pytest.approx(t_loss.item(), rel=1e-5)
    text_ran = kind == "mixed"
    for name, param in model.named_parameters():
        ours = grads[name]
        if name in ("tok.weight", "ln_text.weight", "ln_text.bias") and not text_ran:
            assert ours is None and param.grad is None, name  # torch skipped the text path too
            continue
        assert ours is not None and param.grad is not None, name
        assert ours.dtype == np.float32 and ours.shape == tuple(param.shape)
        np.testing.assert_allclose(ours, param.grad.numpy(), rtol=1e-4, atol=2e-6, err_msg=name)
    assert float(np.abs(grads["tok.weight"]).max() if text_ran else 1) > 0


def test_the_eval_forward_equals_the_torch_models():
    params = perturbed(CFG, seed=8)
    batch = batch_of("mixed")
    ours, _ = backprop.forward(params, CFG, batch)
    model = CrossAttentionScorer.from_weights(Weights(CFG, params)).eval()
    with torch.no_grad():
        theirs = model(Batch.of(batch)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)  # padding positions too
