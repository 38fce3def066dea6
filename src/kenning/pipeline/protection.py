"""Decision auto-protection at remember time (memory-pipeline-v2 "Decision Auto-Protection").

When a statement uses decision language of its own (kenning.graph.decisions), a memory stored
without an explicit type becomes type `constraint` with importance at least 0.85, so decisions
surface in recall (constraints get the resolution boost). Language inside a quote — "…", “…”,
a `code span`, a `> quoted` line — is somebody else's statement and does not count. A type the
caller gave explicitly is kept as is (and its importance); pipeline facts, whose type is the
extractor's guess, are promoted like untyped memories.
A draft rule of the write path (pipeline.hooks.DRAFT_RULES, passed to memory.write.WritePath).
"""

from __future__ import annotations

from dataclasses import replace

from kenning.core.types import MemoryDraft
from kenning.graph.decisions import DECISION_IMPORTANCE, states_decision

PROTECTED_TYPE = "constraint"
PROTECTABLE_TYPES = frozenset({"fact", "decision"})


def protect_draft(draft: MemoryDraft) -> MemoryDraft:
    """Return the draft promoted to constraint/0.85 when it states a decision of its own."""
    if draft.type_explicit or not states_decision(draft.content):
        return draft
    kind = PROTECTED_TYPE if draft.type in PROTECTABLE_TYPES else draft.type
    importance = max(float(draft.importance), DECISION_IMPORTANCE)
    metadata = {**draft.metadata, "auto_protected": True}
    return replace(draft, type=kind, importance=importance, metadata=metadata)
