"""Domain types shared by every layer: plain dataclasses, no behaviour beyond derivations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MEMORY_TYPES = frozenset(
    {
        "fact", "preference", "decision", "procedural", "semantic", "episodic", "constraint",
        "gotcha", "error_pattern", "pattern", "dead_end", "workflow_recipe", "prefetch_pattern",
        "causal_dependency", "module_insight", "work_state", "task_calibration", "document_chunk",
        "requirement", "e2e_observation", "work_unit_outcome", "summary", "observation", "episode",
    }
)
SCOPES = frozenset({"personal", "project", "team", "org"})


@dataclass
class Memory:
    id: str
    content: str
    normalized_content: str
    content_hash: str
    type: str = "fact"
    importance: float = 0.5
    confidence: float = 1.0
    tags: list[str] = field(default_factory=list)
    project: str | None = None
    scope: str = "project"
    source: str | None = None
    related_files: list[str] = field(default_factory=list)
    related_modules: list[str] = field(default_factory=list)
    pinned: bool = False
    needs_review: bool = False
    user_verified: bool = False
    superseded_by: str | None = None
    valid_until: str | None = None
    decay_half_life_days: float | None = None
    access_count: int = 0
    last_accessed_at: str | None = None
    created_at: str = ""
    updated_at: str = ""
    is_deleted: bool = False
    deleted_at: str | None = None
    embedding_model: str | None = None
    extraction_model: str | None = None
    session_key: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    derived_from: list[str] = field(default_factory=list)  # ids of the memories this one was derived from

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class MemoryDraft:
    """What a caller asks to store; the store derives the rest."""

    content: str
    type: str = "fact"
    importance: float = 0.5
    confidence: float = 1.0
    tags: list[str] = field(default_factory=list)
    project: str | None = None
    scope: str = "project"
    source: str | None = None
    related_files: list[str] = field(default_factory=list)
    related_modules: list[str] = field(default_factory=list)
    pinned: bool = False
    session_key: str | None = None
    created_at: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    derived_from: list[str] = field(default_factory=list)
    id: str | None = None  # an imported memory keeps its id; one already stored with it is a duplicate
    type_explicit: bool = False  # the caller chose `type`: write rules keep it (no auto-protection)


@dataclass
class MemoryFilter:
    """Recall and list filters; None means "any"."""

    project: str | None = None
    include_global: bool = False  # with `project`: memories of no project count too
    types: list[str] | None = None
    tags: list[str] | None = None
    scope: str | None = None
    session_key: str | None = None
    since: str | None = None
    until: str | None = None
    include_deleted: bool = False
    include_superseded: bool = False
