"""Key facts from a transcript: the decision / rule / preference / gotcha overlay on the episodes.

A transparent, offline extraction: sentences (split by `offline_rules.split_sentences`, which
keeps "e.g." / code spans / list items whole) from what the user or the assistant says that
carry decision, rule, amendment, preference or gotcha language, in transcript order. Decision
and rule language is read in the sentence's own words (a quoted rule is not a new rule).
Secrets are redacted; duplicates and very short or very long sentences are skipped; at most
`limit` facts per session. Plain statements are not extracted: the episodes hold them raw.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kenning.core.secrets import MARKER, redact
from kenning.graph.decisions import own_words, states_decision
from kenning.providers.offline_rules import split_sentences
from kenning.sessions.transcript import Turn

DECISION_WORDS = re.compile(
    r"\b(?:we|i)\s+(?:decided|chose|agreed|settled on|will use|are going with)\b|\bdecision\b"
    r"|\bgoing forward\b|\bfrom now on\b|\bstandardi[sz]ed on\b|\bsettled\b|\bamended\b", re.I)
RULE_WORDS = re.compile(
    r"\b(?:must(?: not)?|never|always|do not|don't|cannot|can't|only ever|only if|required to|exactly"
    r"|no longer|the rule is)\b", re.I)
AMENDMENT = re.compile(  # says outright that an earlier rule changes
    r"\b(?:amend(?:s|ed|ing|ment)?|supersed(?:e|es|ed|ing)|changed (?:our|my) minds?|updates? to the)\b", re.I)
CHANGE = re.compile(  # may replace an earlier rule, or just compare two options
    r"\b(?:instead|no longer|from now on|not anymore|replac(?:es|ed|ing)|going forward)\b", re.I)
_RULES: list[tuple[str, float, re.Pattern]] = [
    ("preference", 0.65, re.compile(r"\b(i|we)\s+(prefer|like|want|hate|dislike)\b|\bplease (use|avoid|keep)\b", re.I)),
    ("gotcha", 0.7, re.compile(r"\b(gotcha|careful|watch out|the trick is|turns out|root cause|the bug was|caused by)\b", re.I)),
]
DECISION_IMPORTANCE, RULE_IMPORTANCE = 0.8, 0.8
MIN_CHARS, MAX_CHARS = 25, 600


@dataclass
class Fact:
    content: str
    type: str
    importance: float
    turn: int | None = None  # index of the turn it was said in
    amends: int = 0  # 2: says an earlier rule is amended; 1: change language; 0: neither


def classify(sentence: str) -> tuple[str, float] | None:
    """(type, importance) of a sentence worth keeping, or None. Decisions and rules count only
    in the sentence's own words."""
    own = own_words(sentence)
    if states_decision(sentence) or DECISION_WORDS.search(own):
        return "decision", DECISION_IMPORTANCE
    if RULE_WORDS.search(own):
        return "constraint", RULE_IMPORTANCE
    for kind, importance, pattern in _RULES:
        if pattern.search(sentence):
            return kind, importance
    return None


def amendment_level(sentence: str) -> int:
    own = own_words(sentence)
    return 2 if AMENDMENT.search(own) else 1 if CHANGE.search(own) else 0


def key_facts(turns: list[Turn], prompts: list[str], limit: int) -> list[Fact]:
    """Facts in transcript order (the prompts stand in for a missing transcript)."""
    sources = [(i, t.text) for i, t in enumerate(turns) if t.role in ("user", "assistant")]
    if not sources:
        sources = [(None, p) for p in prompts]
    facts: list[Fact] = []
    seen: set[str] = set()
    for index, text in sources:
        for sentence in split_sentences(text or ""):
            sentence = " ".join(sentence.split()).strip(" -*>#")
            if not MIN_CHARS <= len(sentence) <= MAX_CHARS or sentence.startswith(("<", "{", "```")):
                continue
            key = sentence.lower()
            kind = classify(sentence) if key not in seen else None
            if kind is None:
                continue
            clean = redact(sentence)
            if sum(len(m.group(0)) for m in MARKER.finditer(clean)) > len(clean) / 2:
                continue  # mostly secrets: nothing worth keeping
            seen.add(key)
            facts.append(Fact(clean, kind[0], kind[1], index, amendment_level(sentence)))
            if len(facts) >= limit:
                return facts
    return facts
