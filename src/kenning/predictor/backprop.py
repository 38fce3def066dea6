"""The scorer's training pass in numpy: the forward over a padded batch, the ListNet KL loss, and
every parameter's gradient, written out by hand (issue 36: the fit process trains without torch).

The forward is `Weights.score`'s (weights.py) over a `features.Batch`, plus dropout on the
candidates' encodings in training:

    encode(x)  = LN_emb(down(emb))            where the item has an embedding of the model's width
               = LN_text(mean of tok[tokens])  otherwise, padding included (an empty bag is zeros)
    ctx        = encode(context) + project[slot] + when(session features)
    mem        = encode(candidates) * keep      keep: 0 with probability p, else 1 / (1 - p) (training)
    score_i    = gate([k(mem_i) · q(ctx) / √d, v(mem_i), features_i])
    loss       = Σ_b w_b KL(softmax(labels_b / T_b) || softmax(scores_b / T_b)) / max(Σ w, 1e-9)
                 (over each session's judged candidates; `w` None: the mean)

`backward` gives each parameter's gradient of that loss, as autograd gave it for the torch model
this replaced (tests/predictor/torch_reference.py; tests/predictor/test_predictor_backprop.py holds
the two together and to finite differences). Like it, the text path runs only when some item of
the batch takes it: otherwise `tok.weight` and the `ln_text` parameters get no gradient (None) and
Adam leaves them and their step count alone. The arithmetic runs in the parameters' dtype
(float32 in training; float64 for the finite-difference test).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from kenning.predictor.features import Batch
from kenning.predictor.weights import SESSION_FEATURES, ScorerConfig, layer_norm, linear

Params = Mapping[str, np.ndarray]
Grads = dict[str, np.ndarray | None]
VERY_NEGATIVE = -1e9  # a masked position's logit in both softmaxes (torch's masked_fill value)


def dropout_keep(rng: np.random.Generator, shape: tuple[int, ...], p: float, dtype: np.dtype) -> np.ndarray | None:
    """The scaled keep mask of inverted dropout: 0 with probability `p`, else 1 / (1 - p); None at p = 0."""
    if p <= 0.0:
        return None
    if p >= 1.0:
        return np.zeros(shape, dtype)
    kept = rng.random(shape, dtype=np.float64) >= p
    return kept.astype(dtype) * dtype.type(1.0 / (1.0 - p))


@dataclass
class _Encoded:
    """What `_encode_backward` needs of one `_encode`."""

    out: np.ndarray  # [M, d]
    emb_rows: np.ndarray  # indices of the items on the embedding path
    emb_in: np.ndarray  # their embeddings [Me, native_dim]
    emb_norm: tuple[np.ndarray, np.ndarray]  # (x̂, 1/σ) of LN_emb
    text_rows: np.ndarray | None  # indices of the items on the text path; None: the path did not run
    token_bag: np.ndarray | None  # each read token's row among text_rows
    token_ids: np.ndarray | None
    bag_sizes: np.ndarray | None  # [Mt] tokens per bag, ≥ 1 (an empty bag's mean is zeros)
    text_norm: tuple[np.ndarray, np.ndarray] | None


@dataclass
class Tape:
    """The forward's intermediate values, for `backward`."""

    ctx: _Encoded
    mem: _Encoded
    query_in: np.ndarray  # [B, d]: encode(context) + project + when
    when_in: np.ndarray  # [B, 7]
    keep: np.ndarray | None  # [B, N, d] the dropout mask (scaled), None: none
    mem_in: np.ndarray  # [B, N, d]: the candidates' encodings after dropout
    q: np.ndarray  # [B, d]
    k: np.ndarray  # [B, N, d]
    x: np.ndarray  # [B, N, 1 + v_dim + n_features]: the gate's input


def _layer_norm_backward(dy: np.ndarray, weight: np.ndarray, cache: tuple[np.ndarray, np.ndarray]) -> tuple[
        np.ndarray, np.ndarray, np.ndarray]:
    """(d input, d weight, d bias) of y = x̂ · weight + bias."""
    normed, rstd = cache
    dnormed = dy * weight
    dx = rstd * (dnormed - dnormed.mean(axis=-1, keepdims=True)
                 - normed * (dnormed * normed).mean(axis=-1, keepdims=True))
    return dx, (dy * normed).sum(axis=0), dy.sum(axis=0)


def _encode(p: Params, config: ScorerConfig, emb: np.ndarray, has_emb: np.ndarray, tokens: np.ndarray,
            offsets: np.ndarray) -> _Encoded:
    dtype = p["down.weight"].dtype
    m = has_emb.shape[0]
    out = np.empty((m, config.d), dtype)
    emb_rows = np.flatnonzero(has_emb)
    emb_in = emb[emb_rows].astype(dtype, copy=False)
    normed, emb_norm = layer_norm(linear(p, "down", emb_in), p["ln_emb.weight"], p["ln_emb.bias"])
    out[emb_rows] = normed
    encoded = _Encoded(out, emb_rows, emb_in, emb_norm, None, None, None, None, None)
    if has_emb.all():  # the text path does not run (torch skipped the 1 M-row table then too)
        return encoded
    text_rows = np.flatnonzero(~has_emb)
    sizes = np.diff(np.append(offsets, len(tokens)))  # every item's bag, both paths
    bag_of_token = np.repeat(np.arange(m), sizes)
    on_text = ~has_emb[bag_of_token]
    row_in_text = np.full(m, -1, np.int64)
    row_in_text[text_rows] = np.arange(len(text_rows))
    token_bag, token_ids = row_in_text[bag_of_token[on_text]], tokens[on_text]
    bag_sizes = np.maximum(sizes[text_rows], 1).astype(dtype)
    sums = np.zeros((len(text_rows), config.d), dtype)
    np.add.at(sums, token_bag, p["tok.weight"][token_ids])
    normed, text_norm = layer_norm(sums / bag_sizes[:, None], p["ln_text.weight"], p["ln_text.bias"])
    out[text_rows] = normed
    encoded.text_rows, encoded.token_bag, encoded.token_ids = text_rows, token_bag, token_ids
    encoded.bag_sizes, encoded.text_norm = bag_sizes, text_norm
    return encoded


def _encode_backward(p: Params, enc: _Encoded, dout: np.ndarray, grads: Grads) -> None:
    """Adds the gradient of one encode's output `dout` [M, d] into `grads`."""
    dh, dln_w, dln_b = _layer_norm_backward(dout[enc.emb_rows], p["ln_emb.weight"], enc.emb_norm)
    _add(grads, "ln_emb.weight", dln_w)
    _add(grads, "ln_emb.bias", dln_b)
    _add(grads, "down.weight", dh.T @ enc.emb_in)
    _add(grads, "down.bias", dh.sum(axis=0))
    if enc.text_rows is None:
        return
    assert enc.text_norm is not None and enc.bag_sizes is not None and enc.token_bag is not None \
        and enc.token_ids is not None
    dmean, dln_w, dln_b = _layer_norm_backward(dout[enc.text_rows], p["ln_text.weight"], enc.text_norm)
    _add(grads, "ln_text.weight", dln_w)
    _add(grads, "ln_text.bias", dln_b)
    dtable = grads.get("tok.weight")
    if dtable is None:
        dtable = grads["tok.weight"] = np.zeros_like(p["tok.weight"])
    np.add.at(dtable, enc.token_ids, (dmean / enc.bag_sizes[:, None])[enc.token_bag])


def _add(grads: Grads, name: str, value: np.ndarray) -> None:
    have = grads.get(name)
    grads[name] = value if have is None else have + value


def forward(p: Params, config: ScorerConfig, batch: Batch, keep: np.ndarray | None = None) -> tuple[np.ndarray, Tape]:
    """Scores [B, N] (padding positions hold values no loss reads) and the tape for `backward`.
    `keep`: the candidates' dropout mask [B, N, d] (`dropout_keep`), None in eval."""
    dtype = p["gate.weight"].dtype
    B, N = batch.cand_has_emb.shape
    d = config.d
    ctx = _encode(p, config, batch.ctx_emb, batch.ctx_has_emb, batch.ctx_tokens, batch.ctx_offsets)
    when_in = batch.features[:, 0, SESSION_FEATURES].astype(dtype)
    query_in = ctx.out + p["project.weight"][batch.project_slot] + linear(p, "when", when_in)
    mem = _encode(p, config, batch.cand_emb.reshape(B * N, -1), batch.cand_has_emb.reshape(-1),
                  batch.cand_tokens, batch.cand_offsets)
    mem_in = mem.out.reshape(B, N, d)
    if keep is not None:
        mem_in = mem_in * keep
    q = linear(p, "q", query_in)
    k, v = linear(p, "k", mem_in), linear(p, "v", mem_in)
    att = np.einsum("bnd,bd->bn", k, q) / dtype.type(math.sqrt(d))
    x = np.concatenate([att[..., None], v, batch.features.astype(dtype)], axis=-1)
    scores = (x @ p["gate.weight"][0] + p["gate.bias"][0]).astype(dtype, copy=False)
    return scores, Tape(ctx, mem, query_in, when_in, keep, mem_in, q, k, x)


def listnet_kl(scores: np.ndarray, labels: np.ndarray, mask: np.ndarray, temperature: np.ndarray,
               weight: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """ListNet loss — KL(P_true || P_model), both softmax(x / T) over a session's judged candidates,
    the sessions' mean weighted by `weight` when given — and its gradient by the scores."""
    dtype = scores.dtype
    t = temperature.astype(dtype)[:, None]

    def log_softmax(x: np.ndarray) -> np.ndarray:
        x = np.where(mask, x, dtype.type(VERY_NEGATIVE))
        shifted = x - x.max(axis=-1, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))

    log_p_model = log_softmax(scores / t)
    log_p_true = log_softmax(labels.astype(dtype) / t)
    p_true = np.exp(log_p_true)
    kl = np.where(mask, p_true * (log_p_true - log_p_model), 0).sum(axis=-1)
    if weight is None:
        share = np.full(len(kl), 1.0 / len(kl), dtype)
    else:
        share = weight.astype(dtype) / dtype.type(max(float(weight.astype(dtype).sum()), 1e-9))
    loss = float((kl * share).sum())
    p_true_read = np.where(mask, p_true, 0)
    dlogits = np.exp(log_p_model) * p_true_read.sum(axis=-1, keepdims=True) - p_true_read
    dscores = np.where(mask, dlogits, 0) * (share[:, None] / t)
    return loss, dscores.astype(dtype, copy=False)


def backward(p: Params, config: ScorerConfig, batch: Batch, tape: Tape, dscores: np.ndarray) -> Grads:
    """Every parameter's gradient given d loss / d scores; None for the text path's parameters
    when no item took it."""
    dtype = p["gate.weight"].dtype
    B, N = dscores.shape
    d, v_dim = config.d, config.v_dim
    grads: Grads = {name: None for name in p}
    gate_w = p["gate.weight"][0]
    grads["gate.weight"] = (dscores.reshape(-1) @ tape.x.reshape(B * N, -1))[None, :]
    grads["gate.bias"] = np.array([dscores.sum()], dtype)
    scale = dtype.type(1.0 / math.sqrt(d))
    datt = dscores * gate_w[0] * scale  # [B, N]
    dv = dscores[..., None] * gate_w[1:1 + v_dim]  # [B, N, v_dim]
    dk = datt[..., None] * tape.q[:, None, :]  # [B, N, d]
    dq = np.einsum("bn,bnd->bd", datt, tape.k)  # [B, d]
    flat_in = tape.mem_in.reshape(B * N, d)
    grads["k.weight"] = dk.reshape(B * N, d).T @ flat_in
    grads["k.bias"] = dk.sum(axis=(0, 1))
    grads["v.weight"] = dv.reshape(B * N, v_dim).T @ flat_in
    grads["v.bias"] = dv.sum(axis=(0, 1))
    dmem = dk @ p["k.weight"] + dv @ p["v.weight"]
    if tape.keep is not None:
        dmem = dmem * tape.keep
    grads["q.weight"] = dq.T @ tape.query_in
    grads["q.bias"] = dq.sum(axis=0)
    dquery = dq @ p["q.weight"]
    dproject = np.zeros_like(p["project.weight"])
    np.add.at(dproject, batch.project_slot, dquery)
    grads["project.weight"] = dproject
    grads["when.weight"] = dquery.T @ tape.when_in
    grads["when.bias"] = dquery.sum(axis=0)
    for name in ("down.weight", "down.bias", "ln_emb.weight", "ln_emb.bias"):
        grads[name] = None  # summed over both encodes below
    _encode_backward(p, tape.ctx, dquery, grads)
    _encode_backward(p, tape.mem, dmem.reshape(B * N, d), grads)
    return grads


def loss_and_grads(p: Params, config: ScorerConfig, batch: Batch, weight: np.ndarray | None = None,
                   keep: np.ndarray | None = None) -> tuple[float, Grads]:
    """One training step's loss and gradients (`keep`: the dropout mask, None for none)."""
    scores, tape = forward(p, config, batch, keep)
    loss, dscores = listnet_kl(scores, batch.labels, batch.mask, batch.temperature, weight)
    return loss, backward(p, config, batch, tape, dscores)
