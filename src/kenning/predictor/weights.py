"""The scorer's weights as numpy arrays, its initialisation, and its forward pass in numpy: what the
sidecar serves with.

Nothing of the predictor imports torch (issue 36): torch held ~220 MB of the sidecar's memory, and
then of each fit process's, for a model of a few small matrix products. The sidecar scores with
`Weights.score`; a fit (`predictor.fit`, a short-lived process) trains these arrays in numpy
(`backprop.py`, `adam.py`, `train.py`) and hands new ones back.

`score` is the training forward (`backprop.forward`) in eval mode for one session (no dropout, no
padding):

    encode(x)  = LN_emb(down(emb))            where an embedding of the model's width is present
               = LN_text(mean of tok[tokens])  otherwise (an empty bag is zeros)
    query      = q(encode(context) + project[slot] + when(session features))
    score_i    = gate([k(encode(m_i)) · query / √d, v(encode(m_i)), features_i])

tests/predictor/test_predictor_weights.py holds it to the torch model this replaced
(tests/predictor/torch_reference.py) and to the training forward.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Protocol, TypedDict, cast

import numpy as np

from kenning.predictor import constants as C

SESSION_FEATURES = slice(3, 10)  # tod sin/cos, dow sin/cos, moy sin/cos, log session gap
WHEN_INPUTS = SESSION_FEATURES.stop - SESSION_FEATURES.start
LAYER_NORM_EPS = 1e-5  # torch.nn.LayerNorm's default


class ScorerConfigDict(TypedDict, total=False):
    """ScorerConfig as a checkpoint header stores it (JSON)."""

    native_dim: int
    d: int
    hash_buckets: int
    project_slots: int
    v_dim: int
    n_features: int
    dropout: float
    seed: int


@dataclass
class ScorerConfig:
    native_dim: int = 384  # the store's embedding width (all-MiniLM-L6-v2 = 384)
    d: int = C.INTERNAL_DIM  # internal width; the seed's parameter budget is sized for 64
    hash_buckets: int = C.HASH_BUCKETS  # fixed across users so base weights transfer
    project_slots: int = C.PROJECT_SLOTS  # projects hashed into this many learned rows
    v_dim: int = C.VALUE_DIM  # value width feeding the gate
    n_features: int = C.N_FEATURES
    dropout: float = C.CANDIDATE_DROPOUT  # on the candidates' encodings, training only
    seed: int = 0  # initialisation seed: same seed, same weights

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> ScorerConfig:
        """The config a checkpoint header holds (keys this build does not know are left out)."""
        known = {f for f in cls.__dataclass_fields__}
        return cls(**cast(ScorerConfigDict, {k: v for k, v in data.items() if k in known}))


class Session(Protocol):
    """What a forward pass reads of one session (features.Sample is one)."""

    ids: list[str]
    ctx_vec: np.ndarray | None
    ctx_tokens: list[int]
    cand_vecs: list[np.ndarray | None]
    cand_tokens: list[list[int]]
    features: np.ndarray  # [N, n_features]
    project_slot: int


def param_shapes(config: ScorerConfig) -> list[tuple[str, tuple[int, ...]]]:
    """Every parameter's name and shape, in the torch model's `state_dict()` order (checkpoints keep it)."""
    d, v = config.d, config.v_dim

    def linear(name: str, n_in: int, n_out: int) -> list[tuple[str, tuple[int, ...]]]:
        return [(f"{name}.weight", (n_out, n_in)), (f"{name}.bias", (n_out,))]

    def norm(name: str) -> list[tuple[str, tuple[int, ...]]]:
        return [(f"{name}.weight", (d,)), (f"{name}.bias", (d,))]

    return [*linear("down", config.native_dim, d), ("tok.weight", (config.hash_buckets, d)),
            *norm("ln_emb"), *norm("ln_text"), ("project.weight", (config.project_slots, d)),
            *linear("when", WHEN_INPUTS, d), *linear("q", d, d), *linear("k", d, d), *linear("v", d, v),
            *linear("gate", 1 + v + config.n_features, 1)]


def param_count(config: ScorerConfig) -> int:
    return sum(math.prod(shape) for _, shape in param_shapes(config))


def initial(config: ScorerConfig) -> Weights:
    """An untrained scorer's weights, seeded by `config.seed` (same seed, same weights). The
    distributions are torch's defaults the torch model used — a linear layer's weight and bias
    U(±1/√fan_in), the hash table and the project rows N(0, 0.1), layer norms 1 and 0 — and its
    prior: Q = K = I with zero biases and a positive attention weight in the gate (N(0, 0.05)
    elsewhere, bias 0), so an untrained scorer ranks by context similarity, and the history
    features' prior (constants.HISTORY_PRIOR). The values are numpy's draws, not torch's."""
    rng = np.random.default_rng(config.seed)
    params: dict[str, np.ndarray] = {}
    for name, shape in param_shapes(config):
        layer, kind = name.rsplit(".", 1)
        if layer in ("tok", "project"):
            array = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.1)
        elif layer.startswith("ln_"):
            array = np.ones(shape, np.float32) if kind == "weight" else np.zeros(shape, np.float32)
        elif layer in ("q", "k"):
            array = np.eye(shape[0], dtype=np.float32) if kind == "weight" else np.zeros(shape, np.float32)
        elif layer == "gate":
            array = (rng.standard_normal(shape, dtype=np.float32) * np.float32(0.05) if kind == "weight"
                     else np.zeros(shape, np.float32))
        else:  # down, when, v: nn.Linear's default
            bound = 1.0 / math.sqrt(dict(param_shapes(config))[f"{layer}.weight"][1])
            array = rng.uniform(-bound, bound, shape).astype(np.float32)
        params[name] = array
    gate = params["gate.weight"]
    gate[0, 0] = 1.0
    if config.n_features == C.N_FEATURES:  # the history features' prior (constants.py)
        first = 1 + config.v_dim + C.N_FEATURES - len(C.HISTORY_PRIOR)
        gate[0, first:] = np.asarray(C.HISTORY_PRIOR, np.float32)
    return Weights(config, params)


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """LayerNorm over the last axis, and (x̂, 1/σ), what its gradient needs (backprop.py)."""
    centered = x - x.mean(axis=-1, keepdims=True)
    std = np.sqrt((centered ** 2).mean(axis=-1, keepdims=True) + LAYER_NORM_EPS)
    normed = centered / std
    return normed * weight + bias, (normed, 1.0 / std)


def linear(params: Mapping[str, np.ndarray], name: str, x: np.ndarray) -> np.ndarray:
    """The linear layer `name` of `params` applied to `x`."""
    return x @ params[f"{name}.weight"].T + params[f"{name}.bias"]


@dataclass(frozen=True)
class Weights:
    """One scorer's parameters (float32, by `param_shapes` name) and its config. Never mutated:
    a fit hands back a new one and the sidecar swaps the reference."""

    config: ScorerConfig
    params: Mapping[str, np.ndarray]

    def __post_init__(self) -> None:
        expected = dict(param_shapes(self.config))
        shapes = {name: tuple(array.shape) for name, array in self.params.items()}
        if shapes != expected:
            raise ValueError("parameter shapes do not match the scorer config")

    def param_count(self) -> int:
        return param_count(self.config)

    def _encode(self, vectors: list[np.ndarray | None], tokens: list[list[int]]) -> np.ndarray:
        """[M, d]: each item's embedding path where it has a vector of the model's width, else its text path."""
        p, width = self.params, self.config.native_dim
        present = [v for v in vectors if v is not None and v.shape[0] == width]
        embedded = np.array([v is not None and v.shape[0] == width for v in vectors], bool)
        out = np.zeros((len(vectors), self.config.d), np.float32)
        if present:
            emb = np.stack(present).astype(np.float32, copy=False)
            out[embedded] = layer_norm(linear(p, "down", emb), p["ln_emb.weight"], p["ln_emb.bias"])[0]
        if not embedded.all():
            table = p["tok.weight"]
            bags = np.stack([table[ids].mean(axis=0) if ids else np.zeros(self.config.d, np.float32)
                             for ids, has in zip(tokens, embedded) if not has])
            out[~embedded] = layer_norm(bags, p["ln_text.weight"], p["ln_text.bias"])[0]
        return out

    def score(self, sample: Session) -> np.ndarray:
        """[N] scores of one session's candidates: the training forward in eval mode (no dropout)."""
        n = len(sample.ids)
        if not n:
            return np.zeros(0, np.float32)
        p = self.params
        features = np.asarray(sample.features, np.float32)
        ctx = self._encode([sample.ctx_vec], [list(sample.ctx_tokens)])[0]
        ctx = ctx + p["project.weight"][sample.project_slot] + linear(p, "when", features[0, SESSION_FEATURES])
        query = linear(p, "q", ctx)
        mem = self._encode(list(sample.cand_vecs), [list(t) for t in sample.cand_tokens])
        keys, values = linear(p, "k", mem), linear(p, "v", mem)
        attention = keys @ query / math.sqrt(self.config.d)
        x = np.concatenate([attention[:, None], values, features], axis=1)
        return linear(p, "gate", x)[:, 0].astype(np.float32)
