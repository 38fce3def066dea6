"""The torch model the predictor trained until issue 36, kept as the tests' reference: the numpy
training pass (kenning.predictor.backprop) is held to its forward and autograd's gradients, the
numpy Adam to torch.optim.Adam, Weights.score to its eval forward.

    session context ──encode──► + project embedding + when(time features) ──► Q
    candidate memory ──encode──► K, V
    attention a_i = Q·K_i / √d
    score_i = gate([a_i, V_i, features_i])          (one linear layer: the "MoE-style gate")

`encode`: a learned downprojection of a stored embedding + LayerNorm, or, for text-only items, a
hash-trick bag of words (mean pooled) + its own LayerNorm. In training only, the candidates'
encodings are dropped out (CANDIDATE_DROPOUT); `forward(batch, keep=...)` takes the mask instead,
to compare with numpy on the same one. Its initialisation is torch's (seeded by the config);
src's `weights.initial` draws from the same distributions with numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from torch.nn import functional as F

from kenning.predictor import constants as C
from kenning.predictor import features
from kenning.predictor.weights import SESSION_FEATURES, ScorerConfig, Weights


@dataclass
class Batch:
    """B sessions padded to N candidates. Token lists are flattened EmbeddingBag inputs."""

    ctx_emb: Tensor  # [B, native_dim] (zeros where missing)
    ctx_has_emb: Tensor  # [B] bool
    ctx_tokens: Tensor  # [T_ctx] long
    ctx_offsets: Tensor  # [B] long
    cand_emb: Tensor  # [B, N, native_dim]
    cand_has_emb: Tensor  # [B, N] bool
    cand_tokens: Tensor  # [T] long
    cand_offsets: Tensor  # [B*N] long
    features: Tensor  # [B, N, n_features]
    project_slot: Tensor  # [B] long
    mask: Tensor  # [B, N] bool: real candidate (not padding)
    labels: Tensor | None = None  # [B, N]
    temperature: Tensor | None = None  # [B]
    meta: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, batch: features.Batch, dtype: torch.dtype = torch.float32) -> Batch:
        """The numpy batch (features.collate) as tensors (floats in `dtype`)."""
        def f(a: np.ndarray) -> Tensor:
            return torch.from_numpy(np.array(a)).to(dtype)

        def i(a: np.ndarray) -> Tensor:
            return torch.from_numpy(np.array(a, np.int64))

        def b(a: np.ndarray) -> Tensor:
            return torch.from_numpy(np.array(a, bool))

        return cls(ctx_emb=f(batch.ctx_emb), ctx_has_emb=b(batch.ctx_has_emb), ctx_tokens=i(batch.ctx_tokens),
                   ctx_offsets=i(batch.ctx_offsets), cand_emb=f(batch.cand_emb), cand_has_emb=b(batch.cand_has_emb),
                   cand_tokens=i(batch.cand_tokens), cand_offsets=i(batch.cand_offsets), features=f(batch.features),
                   project_slot=i(batch.project_slot), mask=b(batch.mask), labels=f(batch.labels),
                   temperature=f(batch.temperature), meta=list(batch.meta))


def collate(samples: list[features.Sample], native_dim: int, dtype: torch.dtype = torch.float32) -> Batch:
    return Batch.of(features.collate(samples, native_dim), dtype)


class CrossAttentionScorer(nn.Module):
    def __init__(self, config: ScorerConfig) -> None:
        super().__init__()
        self.config = config
        d = config.d
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(config.seed)
            self.down = nn.Linear(config.native_dim, d)  # pre-embedded path
            self.tok = nn.EmbeddingBag(config.hash_buckets, d, mode="mean")  # text path
            self.ln_emb = nn.LayerNorm(d)
            self.ln_text = nn.LayerNorm(d)
            self.project = nn.Embedding(config.project_slots, d)
            self.when = nn.Linear(SESSION_FEATURES.stop - SESSION_FEATURES.start, d)
            self.q = nn.Linear(d, d)
            self.k = nn.Linear(d, d)
            self.v = nn.Linear(d, config.v_dim)
            self.gate = nn.Linear(1 + config.v_dim + config.n_features, 1)
            nn.init.normal_(self.tok.weight, std=0.1)
            nn.init.normal_(self.project.weight, std=0.1)
            nn.init.normal_(self.gate.weight, std=0.05)
            nn.init.zeros_(self.gate.bias)
            # Start from a sensible prior: Q = K = I and a positive weight on attention, so an
            # untrained scorer ranks by context similarity (a random projection keeps cosines).
            for lin in (self.q, self.k):
                nn.init.eye_(lin.weight)
                nn.init.zeros_(lin.bias)
            with torch.no_grad():
                self.gate.weight[0, 0] = 1.0
                if config.n_features == C.N_FEATURES:  # the history features' prior (constants.py)
                    first = 1 + config.v_dim + C.N_FEATURES - len(C.HISTORY_PRIOR)
                    self.gate.weight[0, first:] = torch.tensor(C.HISTORY_PRIOR)

    def param_count(self) -> int:
        return sum(p.numel() for p in self.parameters())

    @classmethod
    def from_weights(cls, weights: Weights) -> CrossAttentionScorer:
        model = cls(weights.config)
        model.load_state_dict({name: torch.from_numpy(np.array(array, np.float32))
                               for name, array in weights.params.items()})
        return model

    def weights(self) -> Weights:
        """The parameters as numpy (a copy: training this model later does not change them)."""
        return Weights(self.config, {name: t.detach().cpu().numpy().astype(np.float32, copy=True)
                                     for name, t in self.state_dict().items()})

    def encode(self, emb: Tensor, has_emb: Tensor, tokens: Tensor, offsets: Tensor) -> Tensor:
        """[M, native_dim] + bags → [M, d]: the embedding path where present, else the text path."""
        out = self.ln_emb(self.down(emb))
        if bool((~has_emb).any()):  # skip the 1 M-row table when every item is embedded
            text = self.ln_text(self.tok(tokens, offsets))
            out = torch.where(has_emb.unsqueeze(-1), out, text)
        return out

    def forward(self, b: Batch, keep: Tensor | None = None) -> Tensor:
        """Scores [B, N] (padding positions hold garbage; mask them). `keep`: the dropout mask
        (scaled, [B, N, d]) to use instead of drawing one (training or not)."""
        B, N, _ = b.cand_emb.shape
        d = self.config.d
        ctx = self.encode(b.ctx_emb, b.ctx_has_emb, b.ctx_tokens, b.ctx_offsets)
        ctx = ctx + self.project(b.project_slot) + self.when(b.features[:, 0, SESSION_FEATURES])
        mem = self.encode(
            b.cand_emb.reshape(B * N, -1), b.cand_has_emb.reshape(-1), b.cand_tokens, b.cand_offsets
        ).view(B, N, d)
        if keep is not None:
            mem = mem * keep
        else:
            mem = F.dropout(mem, self.config.dropout, self.training)  # training only: see constants
        q = self.q(ctx)  # [B, d]
        k, v = self.k(mem), self.v(mem)  # [B, N, d], [B, N, v_dim]
        att = torch.einsum("bnd,bd->bn", k, q) / math.sqrt(d)
        x = torch.cat([att.unsqueeze(-1), v, b.features], dim=-1)
        return self.gate(x).squeeze(-1)


def listnet_kl(scores: Tensor, labels: Tensor, mask: Tensor, temperature: Tensor,
               weight: Tensor | None = None) -> Tensor:
    """ListNet loss: KL(P_true || P_model), both softmax(x / T) over a session's candidates;
    the sessions' mean, weighted by `weight` when given."""
    t = temperature.unsqueeze(-1)
    very_negative = -1e9
    log_p_model = F.log_softmax((scores / t).masked_fill(~mask, very_negative), dim=-1)
    log_p_true = F.log_softmax((labels / t).masked_fill(~mask, very_negative), dim=-1)
    kl = (log_p_true.exp() * (log_p_true - log_p_model)).masked_fill(~mask, 0.0).sum(-1)
    if weight is None:
        return kl.mean()
    return (kl * weight).sum() / weight.sum().clamp_min(1e-9)


def clone_model(model: CrossAttentionScorer) -> CrossAttentionScorer:
    """A deep copy to train on; the serving model is never touched until the swap."""
    twin = CrossAttentionScorer(model.config)
    twin.load_state_dict({k: v.detach().clone() for k, v in model.state_dict().items()})
    return twin
