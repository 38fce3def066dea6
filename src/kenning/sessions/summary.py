"""Key facts from a transcript when no extraction pipeline is wired in.

A transparent fallback for the pipeline's extraction: sentences from the user's turns (and
the assistant's conclusions) that carry decision, preference, constraint or gotcha language
become memories with source='session-summary'. Secrets are redacted; duplicates and very
short or very long sentences are skipped; at most `limit` facts per session.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kenning.core.secrets import MARKER, redact
from kenning.sessions.transcript import Turn

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_RULES: list[tuple[str, float, re.Pattern]] = [
    ("decision", 0.75, re.compile(r"\b(we|i)\s+(decided|chose|agreed|settled on|will use|are going with)\b|\bdecision\b", re.I)),
    ("constraint", 0.8, re.compile(r"\b(must(?: not)?|never|always|do not|don't|cannot|can't|only ever|required to)\b", re.I)),
    ("preference", 0.65, re.compile(r"\b(i|we)\s+(prefer|like|want|hate|dislike)\b|\bplease (use|avoid|keep)\b", re.I)),
    ("gotcha", 0.7, re.compile(r"\b(gotcha|careful|watch out|the trick is|turns out|root cause|the bug was|caused by)\b", re.I)),
    ("fact", 0.55, re.compile(r"\b(is located in|lives in|is configured|runs on|the (port|endpoint|path) is|uses)\b", re.I)),
]
MIN_CHARS, MAX_CHARS = 25, 400


@dataclass
class Fact:
    content: str
    type: str
    importance: float


def key_facts(turns: list[Turn], prompts: list[str], limit: int) -> list[Fact]:
    """Facts in transcript order, user turns first in priority."""
    sources = [t.text for t in turns if t.role == "user"] or prompts
    sources += [t.text for t in turns if t.role == "assistant"]
    facts: list[Fact] = []
    seen: set[str] = set()
    for text in sources:
        for sentence in _SENTENCE.split(text or ""):
            sentence = " ".join(sentence.split()).strip(" -*>#")
            if not MIN_CHARS <= len(sentence) <= MAX_CHARS or sentence.startswith(("<", "{", "```")):
                continue
            key = sentence.lower()
            if key in seen:
                continue
            for kind, importance, pattern in _RULES:
                if pattern.search(sentence):
                    clean = redact(sentence)
                    if sum(len(m) for m in MARKER.findall(clean)) > len(clean) / 2:
                        break  # mostly secrets: nothing worth keeping
                    seen.add(key)
                    facts.append(Fact(clean, kind, importance))
                    break
            if len(facts) >= limit:
                return facts
    return facts
