"""Decision auto-protection at remember time (memory-pipeline-v2 "Decision Auto-Protection").

When a statement states a decision or rule of its own — a sentence with decision language that
passes the one claim test (kenning.core.claims: asserted, complete, a rule / decision in its own
words; not a question, hedge, speculation, wish, bug report or fragment) — a memory stored
without an explicit type becomes type `constraint` with importance at least 0.85, so decisions
surface in recall (constraints get the resolution boost); the claim's evidence goes to
`metadata.claim`. Language inside a quote — "…", “…”, a `code span`, a `> quoted` line — is
somebody else's statement and does not count. A type the caller gave explicitly is kept as is
(and its importance); pipeline facts, whose type is the extractor's guess, are promoted like
untyped memories. A draft rule of the write path (pipeline.hooks.DRAFT_RULES, passed to
memory.write.WritePath).
"""

from __future__ import annotations

from dataclasses import replace

from kenning.core import claims
from kenning.core.types import MemoryDraft
from kenning.graph.decisions import DECISION_IMPORTANCE, states_decision

PROTECTED_TYPE = "constraint"
PROTECTABLE_TYPES = frozenset({"fact", "decision"})


def decision_claim(content: str) -> claims.Verdict | None:
    """The first sentence that states a decision of its own and passes the claim test, or None."""
    previous = None
    for sentence in claims.sentences(content):
        if states_decision(sentence):
            verdict = claims.judge(sentence, claims.Context(speaker="unknown", previous=previous))
            if verdict.kept and verdict.type in ("decision", "constraint"):
                return verdict
        previous = sentence
    return None


def protect_draft(draft: MemoryDraft) -> MemoryDraft:
    """Return the draft promoted to constraint/0.85 when it states a decision of its own."""
    if draft.type_explicit or not states_decision(draft.content):
        return draft
    verdict = decision_claim(draft.content)
    if verdict is None:
        return draft
    kind = PROTECTED_TYPE if draft.type in PROTECTABLE_TYPES else draft.type
    importance = max(float(draft.importance), DECISION_IMPORTANCE)
    metadata = {**draft.metadata, "auto_protected": True}
    if claims.EVIDENCE_KEY not in metadata and verdict.evidence is not None:
        metadata[claims.EVIDENCE_KEY] = {**verdict.evidence.to_dict(), "rule": f"auto-protection:{verdict.evidence.rule}"}
    return replace(draft, type=kind, importance=importance, metadata=metadata)
