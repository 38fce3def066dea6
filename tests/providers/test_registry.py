"""providers/registry.py: built-ins registered like plugins, one override point per provider kind."""

from __future__ import annotations

import numpy as np
import pytest

from kenning.core.config import EmbeddingSettings, LLMSettings
from kenning.core.errors import ConfigError
from kenning.providers.embedding import EmbeddingProvider, OllamaEmbedding, OpenAIEmbedding
from kenning.providers.llm import BaseLLMProvider, ClaudeCliProvider, GenerateOptions, Generation, OllamaProvider
from kenning.providers.offline import OfflineProvider
from kenning.providers.onnx_embedding import OnnxEmbedding
from kenning.providers.registry import (
    EMBEDDING, LLM, Registry, build_embedding_provider, build_llm_provider, embedding_name,
)


def test_every_provider_the_settings_can_name_is_registered():
    assert LLM.names() == ["offline", "ollama", "openai", "claude-cli", "none"]
    assert EMBEDDING.names() == ["bundled-onnx", "bundled-torch", "ollama", "openai"]
    for provider in ("bundled", "ollama", "openai"):
        for runtime in ("onnx", "torch"):
            assert embedding_name(EmbeddingSettings(provider=provider, runtime=runtime)) in EMBEDDING.names()


def test_a_name_is_registered_once_and_an_unknown_one_lists_the_known():
    registry: Registry[int] = Registry("llm")
    registry.register("a", 1)
    with pytest.raises(ValueError, match="'a' is already registered"):
        registry.register("a", 2)
    with pytest.raises(ConfigError, match="unknown llm provider 'b'; one of a$"):
        registry.factory("b")
    with pytest.raises(ConfigError, match="unknown llm provider 'gpt'; one of offline, ollama, openai, claude-cli, none"):
        build_llm_provider(LLMSettings(), provider="gpt")


def test_the_factories_pass_the_settings_and_a_stages_overrides():
    cfg = LLMSettings(provider="ollama", timeout_s=30, max_output_tokens=256, claude_binary="my-claude")
    ollama = build_llm_provider(cfg)
    assert isinstance(ollama, OllamaProvider)
    assert (ollama.model, ollama.timeout_s, ollama.max_tokens) == ("qwen3:4b", 30, 256)
    claude = build_llm_provider(cfg, provider="claude-cli", model="sonnet", timeout_s=7)
    assert isinstance(claude, ClaudeCliProvider)
    assert (claude.model, claude.binary, claude.timeout_s, claude.max_tokens) == ("sonnet", "my-claude", 7, 256)
    assert isinstance(build_llm_provider(cfg, provider="inherit"), OllamaProvider)
    assert isinstance(build_llm_provider(cfg, provider="offline"), OfflineProvider)

    assert isinstance(build_embedding_provider(EmbeddingSettings()), OnnxEmbedding)
    remote = build_embedding_provider(EmbeddingSettings(provider="ollama", model="nomic", batch_size=8))
    assert isinstance(remote, OllamaEmbedding) and remote.batch_size == 8 and remote.url == "http://127.0.0.1:11434"
    keyed = build_embedding_provider(EmbeddingSettings(provider="openai", model="m", api_key_env="K"), {"K": "sk-1"})
    assert isinstance(keyed, OpenAIEmbedding) and keyed._client.headers["Authorization"] == "Bearer sk-1"
    with pytest.raises(ConfigError, match="embedding.model is required for provider 'openai'"):
        build_embedding_provider(EmbeddingSettings(provider="openai"))


class _Rows(EmbeddingProvider):
    """A provider that writes only embed_batch, recording the batches it was given."""

    model_id = "rows"
    dims = 2

    def __init__(self, batches_itself: bool) -> None:
        super().__init__(batch_size=2)
        self.batches_itself = batches_itself
        self.calls: list[int] = []

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        return np.asarray([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_embed_batch_is_the_one_method_a_provider_writes():
    with pytest.raises(TypeError):
        EmbeddingProvider()  # type: ignore[abstract]
    remote = _Rows(batches_itself=False)
    vectors = remote.embed_many(["a", "bbb", "cc", "d", "eeeee"])
    assert remote.calls == [2, 2, 1]  # batch_size texts per call
    assert vectors.shape == (5, 2) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    local = _Rows(batches_itself=True)
    assert np.allclose(local.embed_many(["a", "bbb", "cc", "d", "eeeee"]), vectors)
    assert local.calls == [5]  # a local model batches by length itself
    assert np.allclose(remote.embed_query("bbb"), vectors[1]) and remote.calls[-1] == 1
    remote.embed_query("bbb")
    assert remote.calls[-1] == 1 and len(remote.calls) == 4  # the second query came from the cache


class _Echo(BaseLLMProvider):
    name = "echo"

    def complete(self, prompt: str, opts: GenerateOptions) -> Generation:
        return Generation(prompt.upper(), 1, 1, self.model)


def test_complete_is_the_one_method_an_llm_provider_writes():
    with pytest.raises(TypeError):
        BaseLLMProvider("m")  # type: ignore[abstract]
    echo = _Echo("echo-1")
    assert echo.generate("hi") == "HI"
    assert echo.available() is True and echo.blocked_reason() is None
    assert echo.describe() == {"provider": "echo", "model": "echo-1", "timeout_s": 60.0}
