"""The sidecar's numpy forward pass gives the torch reference model's scores, and the fit process trains in its own process."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kenning.predictor import constants as C
from kenning.predictor.constants import TrainConfig
from kenning.predictor import fit
from kenning.predictor.features import Sample
from kenning.predictor.tokens import hash_tokens
from kenning.predictor.weights import ScorerConfig, Weights, initial, param_shapes
from tests.predictor.torch_reference import CrossAttentionScorer, collate

CFG = ScorerConfig(native_dim=12, d=8, hash_buckets=64, project_slots=4, v_dim=5, seed=7)


def trained_like(config: ScorerConfig = CFG) -> CrossAttentionScorer:
    model = CrossAttentionScorer(config)
    generator = torch.Generator().manual_seed(3)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=generator) * 0.3)  # away from the init's identities
    return model


def session(rng: np.random.Generator, n: int, *, ctx: str, cand: str, dims: int = 12, slot: int = 1,
            labels: bool = False) -> Sample:
    """`ctx`/`cand`: 'vec' (all embedded), 'text' (none), 'mixed' (every third without), 'wrong' (another width)."""
    def vector(i: int, kind: str) -> np.ndarray | None:
        if kind == "text" or (kind == "mixed" and i % 3 == 0):
            return None
        return rng.normal(size=dims + (5 if kind == "wrong" else 0)).astype(np.float32)

    features = rng.normal(size=(n, C.N_FEATURES)).astype(np.float32)
    features[:, 3:10] = features[0, 3:10]  # one session's time features
    return Sample(
        session_key=f"s-{ctx}-{cand}", ids=[f"m{i}" for i in range(n)], ctx_vec=vector(1, ctx),
        ctx_tokens=hash_tokens("the ledger tests fail again", 64),
        cand_vecs=[vector(i, cand) for i in range(n)],
        cand_tokens=[hash_tokens(f"memory {i} about ledger sequence gaps" if i % 4 else "", 64) for i in range(n)],
        features=features, project_slot=slot,
        labels=rng.uniform(-0.2, 1.0, size=n).astype(np.float32) if labels else None)


@pytest.mark.parametrize("ctx, cand", [("vec", "vec"), ("vec", "text"), ("text", "mixed"), ("wrong", "mixed"),
                                       ("vec", "wrong")])
def test_numpy_scores_equal_the_torch_models(ctx, cand):
    model = trained_like()
    weights = model.weights()
    rng = np.random.default_rng(11)
    samples = [session(rng, n, ctx=ctx, cand=cand, slot=n % 4) for n in (1, 4, 9)]
    model.eval()
    with torch.no_grad():
        batch = model(collate(samples, CFG.native_dim)).numpy()
    for i, (sample, expected) in enumerate(zip(samples, batch)):
        expected = expected[:len(sample.ids)]
        got = weights.score(sample)
        assert got.dtype == np.float32 and got.shape == (len(sample.ids),)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
        assert np.argsort(-got).tolist() == np.argsort(-expected).tolist()


def test_weights_round_trip_through_the_torch_reference_and_refuse_other_shapes():
    model = trained_like()
    weights = model.weights()
    assert [(name, tuple(t.shape)) for name, t in model.state_dict().items()] == param_shapes(CFG)
    assert weights.param_count() == model.param_count()
    again = CrossAttentionScorer.from_weights(weights).weights()
    assert all(np.array_equal(weights.params[k], again.params[k]) for k in weights.params)
    with torch.no_grad():
        model.gate.bias.add_(1.0)  # training the model later does not change weights taken before
    assert not np.array_equal(model.weights().params["gate.bias"], weights.params["gate.bias"])
    broken = dict(weights.params)
    broken["down.weight"] = np.zeros((8, 13), np.float32)
    with pytest.raises(ValueError, match="shapes do not match"):
        Weights(CFG, broken)


def test_a_fit_process_trains_and_answers_weights_that_score_as_its_model_does():
    rng = np.random.default_rng(5)
    recent = [session(rng, 6, ctx="vec", cand="mixed", labels=True) for _ in range(6)]
    serving = initial(CFG)
    outcome = fit.finish(fit.start(fit.FitJob(config=CFG, weights=serving, recent=recent, canary=recent[:3],
                                              train=TrainConfig(epochs=3, seed=2))))
    assert outcome.summary["swapped"] is True and outcome.weights is not None
    assert outcome.summary["steps"] > 0 and outcome.summary["gates"]["passed"] is True
    changed = [k for k in serving.params if not np.array_equal(serving.params[k], outcome.weights.params[k])]
    assert "gate.weight" in changed and "down.weight" in changed
    # the same job in this process gives the same weights (same seed, same run)
    from kenning.predictor.train import train
    local = train(serving, recent, canary=recent[:3], config=TrainConfig(epochs=3, seed=2))
    assert local.model is not None
    for name, array in local.model.params.items():  # bit for bit: the same numpy, the same seed
        assert np.array_equal(outcome.weights.params[name], array), name
    other = train(serving, recent, canary=recent[:3], config=TrainConfig(epochs=3, seed=3))
    assert other.model is not None and not np.array_equal(other.model.params["gate.weight"],
                                                          local.model.params["gate.weight"])
    assert all(np.array_equal(serving.params[k], initial(CFG).params[k]) for k in serving.params)  # untouched


def test_a_fit_process_that_fails_is_a_clear_error():
    # words hashed into more buckets than this scorer has: numpy raises (index out of bounds) in the
    # fit process, which exits; the caller gets FitError and keeps its weights
    rng = np.random.default_rng(1)
    bad = session(rng, 4, ctx="text", cand="text", labels=True)
    bad.cand_tokens = [hash_tokens("words hashed for the default table", C.HASH_BUCKETS)] * 4
    job = fit.FitJob(config=CFG, weights=initial(CFG), recent=[bad], canary=[bad])
    with pytest.raises(fit.FitError, match="exited with status"):
        fit.finish(fit.start(job))


def _recorded(pdb, user, n: int):
    """`n` recorded sessions: the store's reader, its eligible sessions and the embedding model in use."""
    from kenning.store import predictor as store

    for i in range(n):
        user.record_session(pdb, i)
    conn = pdb.reader()
    return conn, store.eligible_sessions(conn, 0.0, 10), store.embedding_model_in_use(conn)


def test_a_fit_hashes_words_only_where_the_model_reads_them(pdb, user):
    from kenning.predictor.features import collate, load_samples

    conn, sessions, model = _recorded(pdb, user, 4)
    every, _ = load_samples(conn, sessions, model)
    lean, _ = load_samples(conn, sessions, model, native_dim=384)
    other_width, _ = load_samples(conn, sessions, model, native_dim=16)
    assert len(every) == len(lean) >= 4 and all(tokens for s in every for tokens in s.cand_tokens)
    assert all(v is not None and v.shape[0] == 384 for s in lean for v in s.cand_vecs)
    assert not any(tokens for s in lean for tokens in s.cand_tokens)  # every candidate is embedded: no words
    assert [s.cand_tokens for s in other_width] == [s.cand_tokens for s in every]  # vectors it cannot read: words
    full, trimmed = collate(every, 384), collate(lean, 384)
    for name in ("cand_emb", "cand_has_emb", "cand_tokens", "cand_offsets", "features", "labels", "mask"):
        assert np.array_equal(getattr(full, name), getattr(trimmed, name)), name


def test_a_fits_samples_share_each_memorys_vector(pdb, user):
    import pickle

    from kenning.predictor.features import load_samples

    conn, sessions, model = _recorded(pdb, user, 6)
    decoded: dict = {}
    recent, _ = load_samples(conn, sessions[:4], model, decoded=decoded)
    replay, _ = load_samples(conn, sessions[2:], model, decoded=decoded)  # a training run's second load
    rows = [(m, v) for s in recent + replay for m, v in zip(s.ids, s.cand_vecs)]
    by_memory = {m: v for m, v in rows}
    assert len(rows) > 2 * len(by_memory)  # sessions share candidates
    assert all(v is by_memory[m] for m, v in rows)  # one array per memory, across both loads
    assert all(np.array_equal(v, user.vectors[m]) for m, v in by_memory.items())
    sent = len(pickle.dumps((recent, replay)))  # what a fit process is sent
    assert sent < sum(v.nbytes for _, v in rows) / 2
