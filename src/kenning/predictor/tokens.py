"""The scorer's text and project inputs as integers (hash trick), without torch.

The daemon computes these for every scoring request; keeping them out of `model.py` lets the
daemon (and any CLI process) build predictor features without importing torch.
"""

from __future__ import annotations

import zlib

from kenning.core.text import word_tokens
from kenning.predictor import constants as C

MAX_TOKENS = 256  # words hashed per text (memories are short; this bounds the cost)


def hash_tokens(text: str | None, buckets: int = C.HASH_BUCKETS) -> list[int]:
    """Word-level hash trick: crc32(word) mod buckets. No vocabulary, no OOV, stable everywhere."""
    if not text:
        return []
    return [zlib.crc32(w.encode("utf-8")) % buckets for w in word_tokens(text)[:MAX_TOKENS]]


def project_slot(project: str | None, slots: int = C.PROJECT_SLOTS) -> int:
    return 0 if not project else zlib.crc32(project.encode("utf-8")) % slots
