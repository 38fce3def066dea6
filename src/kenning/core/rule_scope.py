"""The scope of a rule as stored (issue 31): one reading for the write path and the migration of old stores.

A stored claim that answers a question ends with "(answering: …)" (or "(after: …)" for what it follows):
that part is its chat context, read as the question / previous sentence of `claims.scope_of`, never as its
own words. Pure and offline (core): safe inside a write transaction and a migration.
"""

from __future__ import annotations

import re

from kenning.core import claims

_CONTEXT = re.compile(r"^(?P<body>.+?) \((?P<joiner>answering|after): (?P<context>.+)\)$", re.S)


def stored_scope(content: str, antecedent: str | None = None,
                 names: frozenset[str] | set[str] | tuple[str, ...] = ()) -> claims.Scope:
    """Where a stored rule applies: its text's scope, with the question it answers (`antecedent`, from
    `metadata.claim`, or the "(answering: …)" it carries) and the sentence it follows as context."""
    text = " ".join((content or "").split())
    found = _CONTEXT.match(text)
    body, question, previous = text, antecedent, None
    if found:
        body = found.group("body")
        if found.group("joiner") == "answering":
            question = question or found.group("context")
        else:
            previous = found.group("context")
    return claims.scope_of(body, question=question, previous=previous, names=names)
