"""Content normalization and hashing (memory-pipeline-v2 "Content Normalization")."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_WHITESPACE = re.compile(r"\s+")
_TRAILING_PUNCT = re.compile(r"[.,!?;:]+$")
_WORD = re.compile(r"[A-Za-z0-9_]+")


@dataclass(frozen=True)
class NormalizedContent:
    storage: str
    normalized: str
    content_hash: str


def normalize_content(raw: str) -> NormalizedContent:
    """storage = trimmed + whitespace-collapsed; normalized = lowercased, trailing punctuation stripped."""
    storage = _WHITESPACE.sub(" ", raw).strip()
    normalized = _TRAILING_PUNCT.sub("", storage.lower())
    basis = normalized if normalized else storage.lower()
    return NormalizedContent(storage, normalized, hashlib.sha256(basis.encode("utf-8")).hexdigest())


def word_tokens(text: str) -> list[str]:
    """Lower-cased word tokens, as used for keyword queries and overlap measures."""
    return [t.lower() for t in _WORD.findall(text)]
