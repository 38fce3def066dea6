"""The providers kenning can build, by name: one registry per kind (embedding, LLM).

Built-ins are registered below exactly as a plugin would register its own, with
`EMBEDDING.register(name, factory)` / `LLM.register(name, factory)` in one literal list per
kind: no import registers anything by side effect, and this module is the only one that imports
every provider (the provider modules import only their base class). The settings name the
provider (`embedding.provider`, with `embedding.runtime` for the bundled model; `llm.provider`,
or a stage's own provider such as `pipeline.extraction.provider`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from kenning.core.config import EmbeddingSettings, LLMSettings
from kenning.core.errors import ConfigError
from kenning.providers.embedding import BundledEmbedding, EmbeddingProvider, OllamaEmbedding, OpenAIEmbedding
from kenning.providers.llm import (
    DEFAULT_CLAUDE_MODEL, DEFAULT_OLLAMA_MODEL, DEFAULT_OLLAMA_URL, DEFAULT_OPENAI_URL, BaseLLMProvider,
    ClaudeCliProvider, NullProvider, OllamaProvider, OpenAIProvider,
)
from kenning.providers.offline import OfflineProvider
from kenning.providers.onnx_embedding import OnnxEmbedding, default_onnx_path, ensure_onnx_model

DEFAULT_OLLAMA_EMBED_URL = "http://127.0.0.1:11434"
DEFAULT_OPENAI_EMBED_URL = "https://api.openai.com/v1"

F = TypeVar("F")


class Registry(Generic[F]):
    """Factories of one kind of provider by name, in the order they were registered."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, F] = {}

    def register(self, name: str, factory: F) -> None:
        if name in self._factories:
            raise ValueError(f"{self.kind} provider {name!r} is already registered")
        self._factories[name] = factory

    def factory(self, name: str) -> F:
        try:
            return self._factories[name]
        except KeyError:
            raise ConfigError(f"unknown {self.kind} provider {name!r}; one of {', '.join(self.names())}") from None

    def names(self) -> list[str]:
        return list(self._factories)


# -- embedding -----------------------------------------------------------------------------------

EmbeddingFactory = Callable[[EmbeddingSettings, Mapping[str, str]], EmbeddingProvider]


def _common(cfg: EmbeddingSettings) -> dict[str, int]:
    return {"batch_size": cfg.batch_size, "query_cache_size": cfg.query_cache_size}


def onnx_path(cfg: EmbeddingSettings) -> Path:
    """The ONNX export the settings name (`embedding.onnx_path`), else the default one."""
    return Path(cfg.onnx_path).expanduser() if cfg.onnx_path else default_onnx_path()


def _bundled_onnx(cfg: EmbeddingSettings, env: Mapping[str, str]) -> EmbeddingProvider:
    if cfg.quantize != "int8":
        raise ConfigError(f"embedding.quantize: {cfg.quantize} needs embedding.runtime: torch (the onnx model is int8)")
    return OnnxEmbedding(onnx_path(cfg), threads=cfg.torch_threads, bulk_threads=cfg.bulk_threads, **_common(cfg))


def _bundled_torch(cfg: EmbeddingSettings, env: Mapping[str, str]) -> EmbeddingProvider:
    return BundledEmbedding(torch_threads=cfg.torch_threads, quantize=cfg.quantize,
                            bulk_threads=cfg.bulk_threads, **_common(cfg))


def _remote_model(cfg: EmbeddingSettings) -> str:
    if not cfg.model:
        raise ConfigError(f"embedding.model is required for provider {cfg.provider!r}")
    return cfg.model


def _ollama_embedding(cfg: EmbeddingSettings, env: Mapping[str, str]) -> EmbeddingProvider:
    return OllamaEmbedding(cfg.url or DEFAULT_OLLAMA_EMBED_URL, _remote_model(cfg), cfg.timeout_s, **_common(cfg))


def _openai_embedding(cfg: EmbeddingSettings, env: Mapping[str, str]) -> EmbeddingProvider:
    model = _remote_model(cfg)
    api_key = env.get(cfg.api_key_env) if cfg.api_key_env else None
    return OpenAIEmbedding(cfg.url or DEFAULT_OPENAI_EMBED_URL, model, api_key, cfg.timeout_s, **_common(cfg))


EMBEDDING: Registry[EmbeddingFactory] = Registry("embedding")
EMBEDDING.register("bundled-onnx", _bundled_onnx)
EMBEDDING.register("bundled-torch", _bundled_torch)
EMBEDDING.register("ollama", _ollama_embedding)
EMBEDDING.register("openai", _openai_embedding)


def embedding_name(cfg: EmbeddingSettings) -> str:
    """The registry name the settings choose: the bundled model is registered once per runtime."""
    return f"bundled-{cfg.runtime}" if cfg.provider == "bundled" else cfg.provider


def build_embedding_provider(cfg: EmbeddingSettings, environ: Mapping[str, str] | None = None) -> EmbeddingProvider:
    """The provider named in settings; env is read here only for the API key variable."""
    return EMBEDDING.factory(embedding_name(cfg))(cfg, os.environ if environ is None else environ)


def check_model_files(cfg: EmbeddingSettings) -> None:
    """ConfigError now when the configured bundled model file is missing or broken (the daemon checks
    before it starts, instead of failing in its start-up hook); the default ONNX export is built here
    when it is missing (a pip/pipx/uv install). The provider checks again on first use."""
    if embedding_name(cfg) == "bundled-onnx":
        ensure_onnx_model(onnx_path(cfg))


# -- LLM -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LLMChoice:
    """What an LLM factory builds from: the settings, with a stage's overrides already applied."""

    settings: LLMSettings
    model: str  # "" = the provider's default model
    timeout_s: float
    environ: Mapping[str, str]

    @property
    def max_tokens(self) -> int:
        return self.settings.max_output_tokens


LLMFactory = Callable[[LLMChoice], BaseLLMProvider]


def _offline(choice: LLMChoice) -> BaseLLMProvider:
    return OfflineProvider()


def _none(choice: LLMChoice) -> BaseLLMProvider:
    return NullProvider()


def _ollama(choice: LLMChoice) -> BaseLLMProvider:
    return OllamaProvider(choice.settings.url or DEFAULT_OLLAMA_URL, choice.model or DEFAULT_OLLAMA_MODEL,
                          choice.timeout_s, choice.max_tokens)


def _openai(choice: LLMChoice) -> BaseLLMProvider:
    cfg = choice.settings
    if not choice.model:
        raise ConfigError("llm.model is required for provider 'openai'")
    api_key = choice.environ.get(cfg.api_key_env) if cfg.api_key_env else None
    return OpenAIProvider(cfg.url or DEFAULT_OPENAI_URL, choice.model, api_key, choice.timeout_s, choice.max_tokens)


def _claude_cli(choice: LLMChoice) -> BaseLLMProvider:
    return ClaudeCliProvider(choice.model or DEFAULT_CLAUDE_MODEL, choice.settings.claude_binary,
                             choice.timeout_s, choice.max_tokens)


LLM: Registry[LLMFactory] = Registry("llm")
LLM.register("offline", _offline)
LLM.register("ollama", _ollama)
LLM.register("openai", _openai)
LLM.register("claude-cli", _claude_cli)
LLM.register("none", _none)


def build_llm_provider(
    cfg: LLMSettings, *, provider: str | None = None, model: str | None = None,
    timeout_s: float | None = None, environ: Mapping[str, str] | None = None,
) -> BaseLLMProvider:
    """The provider named by `provider` (or cfg.provider; "inherit" means cfg.provider); env is read
    only for the API key."""
    name = provider if provider not in (None, "inherit") else cfg.provider
    factory = LLM.factory(name)
    choice = LLMChoice(cfg, model or cfg.model or "", timeout_s or cfg.timeout_s,
                       os.environ if environ is None else environ)
    return factory(choice)
