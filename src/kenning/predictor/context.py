"""What the predictor is asked to score: the moment (`ScoringContext`) and the pool (`Candidate`).

Session start builds one context per pool — the session's own at session start, the first
prompt's (phase "prompt:1") for a later pool, scored as of the session's start (pass its
started_at as `timestamp`) so its history features match training — and one `Candidate` per
memory in the pool (`Candidate.of(memory, embedding)`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kenning.core.types import Memory

# An embedding as callers hold it: a float32 array, a list of floats, or the stored float32 bytes.
VectorLike = np.ndarray | Sequence[float] | bytes | bytearray | memoryview


@dataclass(frozen=True, slots=True)
class ScoringContext:
    """The moment a pool is scored."""

    session_key: str | None
    project: str | None = None
    text: str | None = None  # the session context or the prompt (tokens when there is no embedding)
    embedding: VectorLike | None = None  # the text's embedding, when one was made
    timestamp: str | None = None  # ISO time the features are computed at (None: now)
    session_gap_hours: float | None = None  # None: read from the previous session's start
    phase: str | None = None  # None at session start; e.g. "prompt:1" for the first prompt's pool


@dataclass(frozen=True, slots=True)
class Candidate:
    """One memory of the pool, with the fields the features read."""

    id: str
    content: str | None = None
    importance: float | None = None
    access_count: int = 0
    created_at: str | None = None
    superseded_by: str | None = None
    embedding: VectorLike | None = None

    @classmethod
    def of(cls, memory: Memory, embedding: VectorLike | None = None) -> Candidate:
        return cls(id=memory.id, content=memory.content, importance=memory.importance,
                   access_count=memory.access_count, created_at=memory.created_at or None,
                   superseded_by=memory.superseded_by, embedding=embedding)
