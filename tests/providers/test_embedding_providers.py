"""Embedding providers: Ollama and OpenAI-compatible over real HTTP (a local server speaking
their protocols), and the bundled model on torch (float32 and int8) with its query cache; the ONNX
runtime (the default) is tested in test_onnx_embedding.py."""

from __future__ import annotations

import numpy as np
import pytest

from kenning.core.config import EmbeddingSettings
from kenning.core.errors import ProviderError
from kenning.providers.embedding import BUNDLED_MODEL_ID
from kenning.providers.registry import build_embedding_provider
from tests.diagnostics.fake_embeddings import FakeEmbeddings, embed_text

TEXTS = ["deploy with blue-green switches", "the cache warmer retries", "postgres vacuum settings",
         "rotate the signing keys", "flaky test in the billing suite"]


@pytest.fixture
def server():
    fake = FakeEmbeddings()
    yield fake
    fake.close()


def test_ollama_batches_normalises_and_names_its_model(server):
    provider = build_embedding_provider(EmbeddingSettings(provider="ollama", model="nomic", url=server.base,
                                                          batch_size=2))
    vectors = provider.embed_many(TEXTS)
    assert server.batch_sizes == [2, 2, 1]
    assert provider.model_id == "ollama:nomic" and provider.dims == vectors.shape[1]
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(vectors[3], embed_text(TEXTS[3]), atol=1e-6)


def test_openai_compatible_sends_the_key_and_keeps_input_order(server):
    cfg = EmbeddingSettings(provider="openai", model="text-embedding-3-small", url=server.url,
                            api_key_env="MY_EMBED_KEY")
    provider = build_embedding_provider(cfg, environ={"MY_EMBED_KEY": "sk-test"})
    vectors = provider.embed_many(TEXTS)
    assert server.authorization == "Bearer sk-test"
    assert provider.model_id == "openai:text-embedding-3-small"
    for text, vector in zip(TEXTS, vectors):  # the server answers in reverse order
        assert np.allclose(vector, embed_text(text), atol=1e-6)


def test_a_failing_provider_raises_a_provider_error_naming_the_url(server):
    server.fail = True
    provider = build_embedding_provider(EmbeddingSettings(provider="ollama", model="nomic", url=server.base))
    with pytest.raises(ProviderError, match=r"ollama embed at http://127\.0\.0\.1:\d+ failed"):
        provider.embed("anything")


def test_query_cache_answers_repeats_without_the_server(server):
    provider = build_embedding_provider(EmbeddingSettings(provider="openai", model="m", url=server.url))
    first = provider.embed_query("how do we deploy")
    server.fail = True  # a second request would now fail
    assert np.array_equal(provider.embed_query("how do we deploy"), first)
    assert server.requests == 1


def test_bundled_int8_is_close_to_float32_and_says_so():
    fp32 = build_embedding_provider(EmbeddingSettings(runtime="torch", quantize="none"))
    int8 = build_embedding_provider(EmbeddingSettings(runtime="torch"))
    assert fp32.model_id == BUNDLED_MODEL_ID and int8.model_id == f"{BUNDLED_MODEL_ID}-int8"
    a, b = fp32.embed_many(TEXTS), int8.embed_many(TEXTS)
    assert a.shape == b.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert float((a * b).sum(axis=1).min()) > 0.85
    # int8 still retrieves: each question finds its own text under both models
    questions = ["how do blue-green deployments switch over", "why does the cache prefill run again",
                 "database cleanup configuration", "key rotation for signatures", "unstable invoice tests"]
    for provider, passages in ((fp32, a), (int8, b)):
        best = [int(np.argmax(passages @ provider.embed_query(q))) for q in questions]
        assert best == [0, 1, 2, 3, 4], provider.model_id


def test_bulk_batches_borrow_threads_and_give_them_back():
    import torch

    from kenning.core.activity import BULK_BATCH

    texts = [f"{TEXTS[i % len(TEXTS)]} #{i}" for i in range(BULK_BATCH)]
    provider = build_embedding_provider(EmbeddingSettings(runtime="torch", torch_threads=1, bulk_threads=2))
    provider.embed("load the model")
    assert torch.get_num_threads() == 1
    vectors = provider.embed_many(texts)
    assert vectors.shape == (BULK_BATCH, 384)
    assert torch.get_num_threads() == 1  # queries after an import run on one thread again
    one_thread = build_embedding_provider(EmbeddingSettings(runtime="torch", torch_threads=1, bulk_threads=1))
    assert np.allclose(one_thread.embed_many(texts), vectors, atol=1e-4)  # threads change speed only
    # int8 activations are quantised per batch, so a text alone comes out slightly different
    single = provider.embed(texts[0])
    assert float(single @ vectors[0]) > 0.9
