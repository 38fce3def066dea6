"""The bundled model on ONNX Runtime (the default runtime): the int8 export built by `make setup`
gives vectors close to the torch model's, a daemon on it never maps PyTorch, and a missing export
is one clear error."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from kenning.core.config import EmbeddingSettings
from kenning.providers.embedding import BUNDLED_MODEL_ID
from kenning.providers.registry import build_embedding_provider
from kenning.providers.onnx_embedding import ONNX_MODEL_ID

SAMPLES = [
    "We deploy with scripts/deploy.sh after the staging smoke tests pass",
    "Stripe sends duplicate webhook events, so the handler dedupes on the event id",
    "Decision: keep SQLite as the default store and offer Postgres for teams",
    "The flaky billing test fails when the clock crosses midnight UTC",
    "Caroline went to the LGBTQ support group on 7 May 2023 and felt accepted",
    "def retry(fn, attempts=3):\n    for i in range(attempts):\n        try:\n            return fn()",
    "Rotate the signing keys every 90 days; the old key verifies for one more week",
    "Melanie painted a sunrise over the lake and hung it in the hallway",
    # longer than the tokenizer file's own 128-token cut: both runtimes read up to 256 tokens
    "The user prefers small pull requests with a test for every behaviour change. " * 12,
]


def test_onnx_vectors_match_the_torch_model():
    onnx = build_embedding_provider(EmbeddingSettings())  # the default runtime
    torch_fp32 = build_embedding_provider(EmbeddingSettings(runtime="torch", quantize="none"))
    assert onnx.model_id == ONNX_MODEL_ID and torch_fp32.model_id == BUNDLED_MODEL_ID
    a, b = onnx.embed_many(SAMPLES), torch_fp32.embed_many(SAMPLES)
    assert a.shape == b.shape == (len(SAMPLES), 384)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    cosines = (a * b).sum(axis=1)
    assert float(cosines.min()) >= 0.99, cosines.round(4).tolist()
    # one text alone (a query) and inside a batch (an import) agree too
    assert float(onnx.embed(SAMPLES[1]) @ b[1]) >= 0.99


def test_a_daemon_on_onnx_never_loads_torch(daemon):
    with daemon.client() as client:
        stored = client.post("/api/memory/remember", json={"content": "The release train leaves every Tuesday at 10:00",
                                                           "project": "onnx-runtime"})
        assert stored.status_code == 200, stored.text
        found = client.post("/api/memory/recall", json={"query": "when does the release train leave",
                                                         "project": "onnx-runtime"})
        assert found.status_code == 200, found.text
        top = found.json()["results"][0]
        assert top["id"] == stored.json()["id"] and top["legs"]["vector"]["rank"] == 1
        assert client.get("/api/health").json()["embedding_model"] == ONNX_MODEL_ID
    maps = open(f"/proc/{daemon.proc.pid}/maps").read()
    assert "onnxruntime" in maps  # the model ran in this process ...
    assert "libtorch" not in maps and "/torch/" not in maps  # ... and PyTorch was never imported


def test_a_missing_onnx_file_is_one_clear_error(tmp_path, unused_port):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(f"embedding:\n  onnx_path: {tmp_path / 'gone.onnx'}\n")
    env = {**os.environ, "KENNING_HOME": str(home), "KENNING_PORT": str(unused_port)}
    env.pop("KENNING_URL", None)
    served = subprocess.run([sys.executable, "-m", "kenning", "serve"], env=env, capture_output=True,
                            text=True, timeout=300)
    assert served.returncode == 2
    lines = served.stderr.strip().splitlines()
    assert len(lines) == 1 and "gone.onnx is missing" in lines[0] and "make setup" in lines[0], served.stderr
    assert "runtime: torch" in lines[0]
    recalled = subprocess.run([sys.executable, "-m", "kenning", "recall", "anything"], env=env,
                              capture_output=True, text=True, timeout=300)  # local mode: no daemon there
    assert recalled.returncode == 1 and "gone.onnx is missing" in recalled.stderr, recalled.stderr
    assert "Traceback" not in recalled.stderr


def test_a_partial_or_damaged_export_is_never_loaded(tmp_path):
    """The export is verified against the record written after it (digest and size): a file cut
    short, a flipped byte or a missing record is refused with what is wrong, never half-loaded.
    (The default path is rebuilt instead: tests/install/test_wheel.py cuts the installed one short.)"""
    import shutil

    from kenning.core.errors import ConfigError
    from kenning.providers.onnx_embedding import (OnnxEmbedding, default_onnx_path, ensure_onnx_model,
                                                  model_problem, record_path)

    source = default_onnx_path()
    assert model_problem(source) is None  # make setup's export carries its record
    model = tmp_path / "m.onnx"
    shutil.copyfile(source, model)
    shutil.copyfile(record_path(source), record_path(model))
    assert ensure_onnx_model(model, build=False) == model

    data = model.read_bytes()
    model.write_bytes(data[: len(data) // 2])  # an export cut short
    with pytest.raises(ConfigError, match="partial"):
        ensure_onnx_model(model, build=False)
    provider = OnnxEmbedding(model)
    with pytest.raises(ConfigError, match="partial"):
        provider.embed("never embedded with half a model")

    model.write_bytes(data[:1000] + bytes([data[1000] ^ 0xFF]) + data[1001:])  # same size, one byte off
    with pytest.raises(ConfigError, match="damaged"):
        ensure_onnx_model(model, build=False)

    model.write_bytes(data)
    record_path(model).unlink()  # a user's own file with no record is accepted when configured ...
    assert model_problem(model, need_record=False) is None
    assert "no checksum record" in model_problem(model)  # ... the default export needs its record
    assert ensure_onnx_model(model, build=False) == model
