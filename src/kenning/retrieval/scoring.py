"""effective_score: the heuristic baseline that the predictor has to beat (SPEC S4)."""

from __future__ import annotations

from datetime import datetime

from kenning.core.clock import days_between, utcnow
from kenning.core.types import Memory

DECAY_PER_DAY = 0.95


def effective_score(memory: Memory, now: datetime | str | None = None) -> float:
    """importance · 0.95^days_since_access; pinned = 1.0; superseded or deleted = 0."""
    if memory.is_deleted or memory.superseded_by:
        return 0.0
    if memory.pinned:
        return 1.0
    last = memory.last_accessed_at or memory.created_at
    days = days_between(last, now or utcnow()) if last else 0.0
    return memory.importance * float(DECAY_PER_DAY ** days)
