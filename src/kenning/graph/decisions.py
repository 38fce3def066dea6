"""Decision language detection (memory-pipeline-v2 "Decision Auto-Protection").

A regex battery (the v2 doc's 14 patterns plus settled/agreed/standardized/the rule is/amended);
`is_decision_content` is true when a sentence carries one of them AND is asserted — the same
claim test every writer uses (kenning.core.claims: not a question, hedge, speculation or wish;
"Should we switch to Postgres?" or "Maybe we decided on Redis" state no decision). The inline
linker promotes a decision memory's attributes to kind='constraint' with importance 0.85
(plain attributes get 0.5). Pure, deterministic, no I/O — safe inside a write tx.
"""

from __future__ import annotations

import re

from kenning.core.claims import own_words, rejection, sentences

DECISION_IMPORTANCE = 0.85
ATTRIBUTE_IMPORTANCE = 0.5

DECISION_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bchos(?:e|en)\s+(?:to\s+use\s+)?.{1,80}?\bover\b",
        r"\bdecided\s+(?:to|on|against)\b",
        r"\bswitch(?:ed|ing)?\s+(?:\w+\s+)?(?:from|to)\b",
        r"\bmigrat(?:ed|ing|e)\s+(?:\w+\s+)?(?:from|to|away)\b",
        r"\bpicked\b.{1,80}?\bover\b",
        r"\bwent\s+with\b",
        r"\bsticking\s+with\b",
        r"\bcommitted\s+to\b",
        r"\bsettled\s+on\b",
        r"\bwill\s+(?:use|go\s+with|stick\s+with)\b",
        r"\bprefers?\b.{1,80}?\b(?:over|instead|rather)\b",
        r"\badopted\b",
        r"\barchitecture\s+decision\b",
        r"\bdesign\s+decision\b",
        r"\bsettled\s*[:\-—]",
        r"\b(?:we|i|they|team)\s+(?:have\s+|had\s+)?(?:agreed|decided)\b",
        r"\bstandardi[sz]ed\s+on\b",
        r"\bthe\s+(?:rule|policy|convention)\s+(?:is|stays|now\s+is)\b",
        r"\bamended\s+(?:rule|policy|decision)\b|\bamendment\s+to\b",
        r"\bsuperseding\b",
        r"\bchanged\s+(?:our|my)\s+minds?\b",
    )
)

_CONSTRAINT_WORDS = re.compile(
    r"\b(?:must(?:\s+not)?|never|always|do\s+not|don't|should\s+not|shouldn't|required?\s+to)\b",
    re.IGNORECASE,
)


def _has_decision(text: str) -> bool:
    return any(p.search(text) for p in DECISION_PATTERNS)


def is_decision_content(text: str) -> bool:
    """True when a sentence of `text` carries decision language and is asserted (claim test)."""
    return any(_has_decision(s) and rejection(s) is None for s in sentences(text))


def is_constraint_language(text: str) -> bool:
    """True for decisions and for asserted explicit rules (must / never / always / do not …)."""
    return any((_has_decision(s) or _CONSTRAINT_WORDS.search(s)) and rejection(s) is None for s in sentences(text))


def states_decision(text: str) -> bool:
    """Asserted decision language in the statement's own words (a quoted rule does not count)."""
    return is_decision_content(own_words(text))


__all__ = ["DECISION_IMPORTANCE", "ATTRIBUTE_IMPORTANCE", "DECISION_PATTERNS", "is_decision_content",
           "is_constraint_language", "own_words", "states_decision"]

