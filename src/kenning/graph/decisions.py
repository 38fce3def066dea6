"""Decision language detection (memory-pipeline-v2 "Decision Auto-Protection").

A 14-pattern regex battery; `is_decision_content` is true when any pattern matches. The
inline linker promotes a decision memory's attributes to kind='constraint' with importance
0.85 (plain attributes get 0.5). Pure, deterministic, no I/O — safe inside a write tx.
"""

from __future__ import annotations

import re

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
    )
)

_CONSTRAINT_WORDS = re.compile(
    r"\b(?:must(?:\s+not)?|never|always|do\s+not|don't|should\s+not|shouldn't|required?\s+to)\b",
    re.IGNORECASE,
)


def is_decision_content(text: str) -> bool:
    """True when `text` contains decision language (any of the 14 patterns)."""
    return any(p.search(text) for p in DECISION_PATTERNS)


def is_constraint_language(text: str) -> bool:
    """True for decisions and for explicit rules (must / never / always / do not …)."""
    return is_decision_content(text) or bool(_CONSTRAINT_WORDS.search(text))
