"""Where a kept rule applies, told once on the write path (issue 31).

Every memory typed as a rule (`claims.RULE_TYPES`: constraint, decision, preference, gotcha) gets
`applies` ('project' | 'area' | None = cannot be told) and, for an area rule, `area`, from the one
offline classifier `core.claims.scope_of` (read by `core.rule_scope.stored_scope`): its own words and
the question it answers (`metadata.claim.antecedent`, or its "(answering: …)"). A draft rule of the write path (pipeline.hooks.DRAFT_RULES), after
decision auto-protection (which may make a draft a rule), so every writer gets it: session-end key
facts, pipeline facts, `kenning remember`, the observer, rules read from commit bodies. A scope the
caller gave is kept; a memory that is not a rule stays unscoped (it never opens a session). When the
rule names indexed code, the code link refines the area inside the write transaction
(`codegraph.links.link_in_tx`: the area becomes the named symbol or file).
"""

from __future__ import annotations

from dataclasses import replace

from kenning.core import claims
from kenning.core.rule_scope import stored_scope
from kenning.core.types import MemoryDraft

SCOPE_KEY = "scope"  # metadata[SCOPE_KEY] = {"reason", "ruleset"}: which cue told the scope


def scope_draft(draft: MemoryDraft) -> MemoryDraft:
    """The draft with its scope told, when it is a rule whose scope the caller did not give."""
    if draft.applies is not None or draft.type not in claims.RULE_TYPES:
        return draft
    evidence = draft.metadata.get(claims.EVIDENCE_KEY)
    antecedent = evidence.get("antecedent") if isinstance(evidence, dict) else None
    scope = stored_scope(draft.content, antecedent if isinstance(antecedent, str) else None)
    metadata = {**draft.metadata, SCOPE_KEY: {"reason": scope.reason, "ruleset": claims.SCOPE_RULESET}}
    return replace(draft, applies=scope.applies, area=(scope.area or "").strip() or None, metadata=metadata)
