"""Content normalization and hashing (memory-pipeline-v2 "Content Normalization")."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_WHITESPACE = re.compile(r"\s+")
_TRAILING_PUNCT = re.compile(r"[.,!?;:]+$")
_WORD = re.compile(r"[A-Za-z0-9_]+")

# The one stop-word list: English function words that only add noise to a keyword query or an
# overlap measure. Modules that need more (the offline rules, the entity extractor, the
# continuity judge) extend it with their own words; none keeps a separate copy.
STOP_WORDS = frozenset(
    "a an and are as at be but by did do does for from had has have he her his how i if in into is it"
    " its me my of on or our she so than that the their them then there these they this to too was"
    " we were what when where which who whom why will with would you your".split()
)
# The labels of a transcript's turns ("User: …", "Assistant: …"): who spoke, never a thing spoken of,
# so never a graph entity (issue 35; store migration m019 removed the ones stored before).
SPEAKER_LABELS = frozenset({"user", "assistant", "human", "system", "the user", "the assistant"})
# The labels a memory's text opens with ("Gotcha: …", "Fact: …", "Constraint: …"): what kind of memory it
# is, never a thing it is about — the week-of-sessions graph had "Gotcha" next to Helm (issue 35).
KIND_LABELS = frozenset({"gotcha", "fact", "constraint", "decision", "preference", "note", "rule", "requirement",
                         "pattern", "workflow", "insight", "observation", "summary", "episode"})


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
