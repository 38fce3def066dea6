"""Decision auto-protection at remember time (memory-pipeline-v2 "Decision Auto-Protection").

When content matches any of the 14 decision patterns (kenning.graph.decisions), a memory the
caller stored as a plain `fact` becomes type `constraint` with importance at least 0.85, so
decisions always surface in recall (constraints get the resolution boost). An explicit type
other than `fact` is the caller's choice and is kept; importance is still raised.
Registered as a draft rule of the write path (kenning.memory.write.DRAFT_RULES).
"""

from __future__ import annotations

from dataclasses import replace

from kenning.core.types import MemoryDraft
from kenning.graph.decisions import DECISION_IMPORTANCE, is_decision_content

PROTECTED_TYPE = "constraint"
PROTECTABLE_TYPES = frozenset({"fact", "decision"})


def protect_draft(draft: MemoryDraft) -> MemoryDraft:
    """Return the draft promoted to constraint/0.85 when it holds decision language."""
    if not is_decision_content(draft.content):
        return draft
    kind = PROTECTED_TYPE if draft.type in PROTECTABLE_TYPES else draft.type
    importance = max(float(draft.importance), DECISION_IMPORTANCE)
    metadata = {**draft.metadata, "auto_protected": True}
    return replace(draft, type=kind, importance=importance, metadata=metadata)
