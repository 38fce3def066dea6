"""SGPT checkpoints: bit-exact round trip, clear errors for damaged files, old model keeps serving."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kenning.predictor import checkpoint as ckpt
from kenning.predictor.weights import ScorerConfig, Weights, initial
from kenning.predictor.sidecar import Engine, RpcError

CFG = ScorerConfig(native_dim=16, d=8, hash_buckets=128, seed=5)


def trained_like(seed: int = 5) -> Weights:
    config = ScorerConfig(native_dim=16, d=8, hash_buckets=128, seed=seed)
    rng = np.random.default_rng(seed)
    return Weights(config, {name: (a + rng.normal(0, 1e-3, a.shape)).astype(np.float32)  # values no init produces
                            for name, a in initial(config).params.items()})


def test_round_trip_is_bit_exact(tmp_path: Path):
    model = trained_like()
    path = tmp_path / "predictor" / "model.bin"
    size = ckpt.save(model, path, flags=ckpt.FLAG_FINETUNED, meta={"model_version": 4})
    assert path.stat().st_size == size
    assert path.read_bytes()[:4] == b"SGPT"
    loaded, flags, meta = ckpt.load(path)
    assert flags == ckpt.FLAG_FINETUNED and meta["model_version"] == 4
    assert loaded.config == model.config
    for name, array in model.params.items():
        assert np.array_equal(array, loaded.params[name]), name
    assert ckpt.to_bytes(loaded, flags=flags, meta=meta) == path.read_bytes()
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]  # temp file renamed away


@pytest.mark.parametrize("damage, message", [
    (lambda b: b[: len(b) // 2], "checksum"),
    (lambda b: b[:10], "truncated"),
    (lambda b: b"XXXX" + b[4:], "not an SGPT"),
    (lambda b: b[:200] + bytes([b[200] ^ 0xFF]) + b[201:], "checksum"),
    (lambda b: b[:4] + (9).to_bytes(4, "little") + b[8:], "version 9"),
])
def test_damaged_files_are_rejected_with_a_clear_error(tmp_path: Path, damage, message):
    path = tmp_path / "model.bin"
    ckpt.save(trained_like(), path)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(ckpt.CheckpointError, match=message):
        ckpt.load(path)


def test_a_corrupt_file_leaves_the_serving_model_in_place(tmp_path: Path):
    good = tmp_path / "model.bin"
    ckpt.save(trained_like(), good, flags=ckpt.FLAG_FINETUNED, meta={"model_version": 3})
    engine = Engine(db_path=None, checkpoint_path=good, native_dim=16)
    assert engine.trained and engine.model_version == 3
    serving = engine.weights
    bad = tmp_path / "bad.bin"
    bad.write_bytes(good.read_bytes()[:-7])
    with pytest.raises(RpcError, match="truncated or corrupt"):
        engine.load_checkpoint({"path": str(bad)})
    assert engine.weights is serving and engine.model_version == 3 and engine.trained


def test_a_corrupt_checkpoint_at_start_is_reported_and_ignored(tmp_path: Path):
    path = tmp_path / "model.bin"
    path.write_bytes(b"SGPT" + b"\x00" * 40)
    engine = Engine(db_path=None, checkpoint_path=path, native_dim=16)
    assert not engine.trained and "refused SGPT checkpoint version 0" in engine.status()["checkpoint_error"]


def test_base_weights_start_a_user_model_marked_pretrained(tmp_path: Path):
    base = tmp_path / "predictor-base.bin"
    model = trained_like(seed=11)
    ckpt.save(model, base, flags=ckpt.FLAG_PRETRAINED_BASE)
    engine = Engine(db_path=None, checkpoint_path=tmp_path / "user.bin", base_weights=base, native_dim=16)
    assert engine.flags & ckpt.FLAG_PRETRAINED_BASE and engine.trained
    assert np.array_equal(engine.weights.params["tok.weight"], model.params["tok.weight"])
    saved = engine.save_checkpoint({})
    _, flags, _ = ckpt.load(saved["path"])
    assert flags & ckpt.FLAG_PRETRAINED_BASE
