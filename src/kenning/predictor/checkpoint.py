"""`SGPT` checkpoints (scorer seed, Phase 6): load base weights → fine-tune on user data.

Layout (little-endian):
    magic  b"SGPT"
    u32    version (3: 19 features — 12 base + 7 history, issue 32; 2: 17 features — 12 base + 5 history,
           issue 11; 1: 12 features)
    u32    flags: bit 0 = pretrained base, bit 1 = fine-tuned
    u32    config_json_len, then that many bytes of UTF-8 JSON:
           {"config": ScorerConfig, "params": [[name, shape], ...], "meta": {...}}
    f64[]  every parameter, in the order of "params", row-major
    u32    crc32 of everything before it (catches truncation and bit rot)
Saved atomically: written to a temp file in the same folder, fsynced, then renamed.
A file that fails any check raises CheckpointError and loads nothing; the sidecar then serves
an untrained model (baseline only) and the daemon retrains from the stored sessions.
Weights are numpy (`predictor.weights`): the sidecar reads and writes checkpoints without torch.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict

import numpy as np

from kenning.core.errors import KenningError
from kenning.predictor.weights import ScorerConfig, Weights, param_shapes

MAGIC = b"SGPT"
VERSION = 3
_VERSION_NOTES = {1: "format 1 holds the 12-feature model; this build scores 19 features (history features added)",
                  2: "format 2 holds the 17-feature model; this build scores 19 (last rating, useful recently)"}
FLAG_PRETRAINED_BASE = 1
FLAG_FINETUNED = 2
_HEADER = struct.Struct("<4sIII")


class CheckpointError(KenningError):
    """A checkpoint file is missing, truncated, corrupt or for another model shape."""


class StoredMeta(TypedDict, total=False):
    """What a checkpoint's header says of its training (the sidecar's CheckpointMeta; a checkpoint
    written without meta has none of it)."""

    model_version: int
    steps: int
    training_pairs: int
    last_trained: str | None


def to_bytes(weights: Weights, *, flags: int = 0, meta: Mapping[str, object] | None = None) -> bytes:
    shapes = param_shapes(weights.config)
    header = {
        "config": weights.config.to_dict(),
        "params": [[name, list(shape)] for name, shape in shapes],
        "meta": meta or {},
    }
    config_json = json.dumps(header, sort_keys=True).encode("utf-8")
    body = b"".join(np.asarray(weights.params[name]).astype("<f8").tobytes() for name, _ in shapes)
    payload = _HEADER.pack(MAGIC, VERSION, flags, len(config_json)) + config_json + body
    return payload + struct.pack("<I", zlib.crc32(payload))


def from_bytes(data: bytes, source: str = "checkpoint") -> tuple[Weights, int, StoredMeta]:
    """Parse and validate; returns (weights, flags, meta). Raises CheckpointError with the reason."""
    if len(data) < _HEADER.size + 4:
        raise CheckpointError(f"{source}: truncated ({len(data)} bytes, not even a header)")
    magic, version, flags, config_len = _HEADER.unpack_from(data)
    if magic != MAGIC:
        raise CheckpointError(f"{source}: not an SGPT checkpoint (magic {magic!r})")
    if version != VERSION:
        why = _VERSION_NOTES.get(version, "unknown format")
        raise CheckpointError(f"{source}: refused SGPT checkpoint version {version} ({why}); this build reads "
                              f"version {VERSION} — the predictor retrains from your sessions")
    (stored_crc,) = struct.unpack_from("<I", data, len(data) - 4)
    if zlib.crc32(data[:-4]) != stored_crc:
        raise CheckpointError(f"{source}: checksum mismatch (file truncated or corrupt)")
    start = _HEADER.size
    try:
        header = json.loads(data[start:start + config_len].decode("utf-8"))
        config = ScorerConfig.from_dict(header["config"])
        params = header["params"]
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"{source}: unreadable config JSON ({exc})") from exc
    expected = {name: list(shape) for name, shape in param_shapes(config)}
    if {name: shape for name, shape in params} != expected:
        raise CheckpointError(f"{source}: parameter shapes do not match the model config")
    offset = start + config_len
    body_len = len(data) - 4 - offset
    total = sum(int(np.prod(shape)) for _, shape in params)
    if body_len != total * 8:
        raise CheckpointError(f"{source}: expected {total * 8} bytes of parameters, found {body_len}")
    state = {}
    for name, shape in params:
        count = int(np.prod(shape))
        values = np.frombuffer(data, dtype="<f8", count=count, offset=offset).reshape(shape)
        state[name] = values.astype(np.float32)
        offset += count * 8
    meta: StoredMeta = header.get("meta") or StoredMeta()
    return Weights(config, state), flags, meta


def save(weights: Weights, path: Path | str, *, flags: int = 0,
         meta: Mapping[str, object] | None = None) -> int:
    """Write atomically (temp + fsync + rename); returns the byte count."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    payload = to_bytes(weights, flags=flags, meta=meta)
    fd, tmp = tempfile.mkstemp(prefix=".model-", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return len(payload)


def load(path: Path | str) -> tuple[Weights, int, StoredMeta]:
    target = Path(path)
    try:
        data = target.read_bytes()
    except OSError as exc:
        raise CheckpointError(f"{target}: cannot read ({exc.strerror or exc})") from exc
    return from_bytes(data, str(target))
