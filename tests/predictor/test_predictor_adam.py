"""predictor.adam (numpy) follows torch.optim.Adam on the same gradients, and a fit never imports torch."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import torch

from kenning.predictor import backprop
from kenning.predictor.adam import Adam
from kenning.predictor.features import collate
from kenning.predictor.weights import ScorerConfig, Weights, initial
from tests.predictor.test_predictor_model import tiny_samples
from tests.predictor.torch_reference import Batch, CrossAttentionScorer, listnet_kl

CFG = ScorerConfig(native_dim=6, d=4, hash_buckets=16, project_slots=4, v_dim=3, seed=3)


def test_the_same_weights_as_torch_optim_adam():
    """25 steps on the gradients autograd gives the torch model (so both optimisers see the same
    gradients at every step); every 7th step the text path does not run and its parameters get
    no gradient: both skip them and keep their step counts."""
    start = initial(CFG)
    model = CrossAttentionScorer.from_weights(start)
    theirs = torch.optim.Adam(model.parameters(), lr=3e-2)
    params = {k: v.copy() for k, v in start.params.items()}
    ours = Adam(params, lr=3e-2)
    batches = [collate(tiny_samples(np.random.default_rng(seed)), CFG.native_dim) for seed in range(5)]
    for step in range(25):
        batch = batches[step % len(batches)]
        tb = Batch.of(batch)
        if step % 7 == 3:  # every item embedded: no gradient for the text table this step
            tb.cand_has_emb[:] = True
            tb.ctx_has_emb[:] = True
        loss = listnet_kl(model(tb, keep=torch.ones(*batch.mask.shape, CFG.d)), tb.labels, tb.mask, tb.temperature)
        theirs.zero_grad()
        loss.backward()
        grads = {name: None if p.grad is None else p.grad.numpy().copy() for name, p in model.named_parameters()}
        assert (grads["tok.weight"] is None) == (step % 7 == 3)
        theirs.step()
        ours.step(grads)
    assert ours.steps["tok.weight"] == 25 - 4 and ours.steps["gate.weight"] == 25
    for name, p in model.named_parameters():
        np.testing.assert_allclose(params[name], p.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
        assert not np.array_equal(params[name], start.params[name]) or name in ("k.bias",), name


def test_numpy_training_with_numpy_adam_tracks_torch_training():
    """The whole loop in numpy (backprop + Adam) against torch's (autograd + torch.optim.Adam) from
    the same weights on the same batches, no dropout: the same weights after 25 steps, to float32 drift.
    Not k.bias, v.bias, gate.bias: each shifts every candidate of a session alike, which a softmax
    does not see, so their true gradient is 0 and what both compute is rounding noise, which Adam
    scales up to steps of lr (neither changes a ranking or the loss)."""
    start = initial(CFG)
    params = {k: v.copy() for k, v in start.params.items()}
    ours = Adam(params, lr=1e-2)
    model = CrossAttentionScorer.from_weights(start)
    theirs = torch.optim.Adam(model.parameters(), lr=1e-2)
    batches = [collate(tiny_samples(np.random.default_rng(seed)), CFG.native_dim) for seed in range(5)]
    for step in range(25):
        batch = batches[step % len(batches)]
        ours.step(backprop.loss_and_grads(params, CFG, batch)[1])
        tb = Batch.of(batch)
        theirs.zero_grad()
        listnet_kl(model(tb, keep=torch.ones(*batch.mask.shape, CFG.d)), tb.labels, tb.mask, tb.temperature).backward()
        theirs.step()
    shift_only = ("k.bias", "v.bias", "gate.bias")
    for name, p in model.named_parameters():
        if name not in shift_only:
            np.testing.assert_allclose(params[name], p.detach().numpy(), rtol=1e-3, atol=1e-4, err_msg=name)


def test_a_fit_does_not_import_torch():
    """A real fit process (fit.start / fit.finish on a small job) trains, swaps, and never imports
    torch: `-X importtime` (PYTHONPROFILEIMPORTTIME, inherited) lists every module the caller and the
    fit process import, on the stderr they share (the caller here imports no torch either)."""
    code = ("import sys, numpy as np\n"
            "from kenning.predictor import fit\n"
            "from kenning.predictor.constants import TrainConfig\n"
            "from kenning.predictor.weights import initial\n"
            "from kenning.predictor.weights import ScorerConfig\n"
            "CFG = ScorerConfig(native_dim=6, d=4, hash_buckets=16, project_slots=4, v_dim=3, seed=3)\n"
            "from tests.predictor.test_predictor_model import tiny_samples\n"
            "samples = tiny_samples(np.random.default_rng(1))\n"
            "job = fit.FitJob(config=CFG, weights=initial(CFG), recent=samples, canary=samples,\n"
            "                 train=TrainConfig(epochs=2))\n"
            "outcome = fit.finish(fit.start(job))\n"
            "print(outcome.summary['steps'] > 0, outcome.weights is not None, 'torch' in sys.modules)\n")
    import os
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}  # -X importtime in the fit process too
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True, env=env)
    assert out.stdout.split() == ["True", "True", "False"]
    imported = [line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")]
    assert imported.count("kenning.predictor.backprop") == 2  # the caller's imports and the fit process's
    assert not [m for m in imported if m == "torch" or m.startswith("torch.")]
