"""predictor.adam gives torch.optim.Adam's weights bit for bit, without importing torch._dynamo."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import torch

from kenning.predictor.adam import Adam
from kenning.predictor.features import collate
from kenning.predictor.model import CrossAttentionScorer, ScorerConfig, listnet_kl
from tests.predictor.test_predictor_model import tiny_samples

CFG = ScorerConfig(native_dim=6, d=4, hash_buckets=16, project_slots=4, v_dim=3, seed=3)


def fitted(make_optimizer, steps: int = 25) -> dict[str, torch.Tensor]:
    model = CrossAttentionScorer(CFG)
    optimizer = make_optimizer(model.parameters())
    batches = [collate(tiny_samples(np.random.default_rng(seed)), CFG.native_dim) for seed in range(5)]
    torch.manual_seed(0)  # dropout
    for step in range(steps):
        batch = batches[step % len(batches)]
        if step % 7 == 3:  # every embedded: the text table gets no gradient this step, as in training
            batch.cand_has_emb[:] = True
            batch.ctx_has_emb[:] = True
        loss = listnet_kl(model(batch), batch.labels, batch.mask, batch.temperature)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_the_same_weights_as_torch_optim_adam_bit_for_bit():
    ours = fitted(lambda params: Adam(params, lr=3e-2))
    theirs = fitted(lambda params: torch.optim.Adam(params, lr=3e-2))
    start = CrossAttentionScorer(CFG).state_dict()
    assert all(not torch.equal(ours[k], start[k]) for k in ("gate.weight", "down.weight", "tok.weight"))
    for name in theirs:
        assert torch.equal(ours[name], theirs[name]), name


def test_a_fit_does_not_import_torch_dynamo():
    code = ("import sys, numpy as np\n"
            "from kenning.predictor.model import CrossAttentionScorer\n"
            "from kenning.predictor.train import TrainConfig, train\n"
            "from tests.predictor.test_predictor_adam import CFG\n"
            "from tests.predictor.test_predictor_model import tiny_samples\n"
            "samples = tiny_samples(np.random.default_rng(1))\n"
            "result = train(CrossAttentionScorer(CFG), samples, canary=samples, config=TrainConfig(epochs=2))\n"
            "print(result.steps > 0, 'torch._dynamo' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["True", "False"]
