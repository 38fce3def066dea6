"""Domain types shared by every layer: plain dataclasses, no behaviour beyond derivations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict, cast

if TYPE_CHECKING:
    import numpy as np

MEMORY_TYPES = frozenset(
    {
        "fact", "preference", "decision", "procedural", "semantic", "episodic", "constraint",
        "gotcha", "error_pattern", "pattern", "dead_end", "workflow_recipe", "prefetch_pattern",
        "causal_dependency", "module_insight", "work_state", "task_calibration", "document_chunk",
        "requirement", "e2e_observation", "work_unit_outcome", "summary", "observation", "episode",
        "commit",  # a git commit as ingested (issue 31): what was done, found by a query, never a rule
    }
)
# The types a person picks when they write a memory themselves (`kenning remember -t`, the dashboard);
# the rest of MEMORY_TYPES are what kenning's own writers use (episodes, observer patterns, chunks).
USER_TYPES = ("fact", "decision", "constraint", "preference", "gotcha", "procedural", "requirement",
              "pattern", "dead_end", "error_pattern", "workflow_recipe")
SCOPES = frozenset({"personal", "project", "team", "org"})


@dataclass(frozen=True)
class Viewer:
    """Who reads or writes: the author stamped on new memories and what they may see.

    A user token of a team server is a viewer with a team: they see their own memories, org
    memories, and the non-personal memories of their team (and those of no team, written by the
    server's own user). The local user of a single-user daemon, or the admin token, sees all.
    """

    user: str
    team: str | None = None
    sees_all: bool = False

    def can_see(self, memory: "Memory") -> bool:
        """The rule of store.memories.visibility_sql, for memories already read."""
        return (self.sees_all or memory.author == self.user or memory.scope == "org"
                or (memory.scope != "personal" and memory.team in (None, self.team)))


class MemoryDict(TypedDict):
    """A Memory as a JSON object (`Memory.to_dict`): its fields, by name. An edge that adds keys
    (history, lifecycle) spreads it into a new dict."""

    id: str
    content: str
    normalized_content: str
    content_hash: str
    type: str
    importance: float
    confidence: float
    tags: list[str]
    project: str | None
    scope: str
    source: str | None
    related_files: list[str]
    related_modules: list[str]
    pinned: bool
    needs_review: bool
    user_verified: bool
    superseded_by: str | None
    valid_until: str | None
    decay_half_life_days: float | None
    access_count: int
    last_accessed_at: str | None
    created_at: str
    updated_at: str
    is_deleted: bool
    deleted_at: str | None
    embedding_model: str | None
    extraction_model: str | None
    session_key: str | None
    metadata: dict[str, Any]
    derived_from: list[str]
    author: str | None
    team: str | None
    applies: str | None
    area: str | None
    stale_at: str | None


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
    author: str | None = None  # the user who wrote it (the OS user on a single-user daemon)
    team: str | None = None  # the writer's team on a team server; None: no team (visible to every team)
    applies: str | None = None  # where a rule applies: 'project' | 'area'; None: not told (never opens a session)
    area: str | None = None  # an area rule's area as a user reads it (a symbol, file, module, command, topic)
    stale_at: str | None = None  # the code its area names was deleted or renamed (held until reviewed)

    def to_dict(self) -> MemoryDict:
        return cast("MemoryDict", dict(self.__dict__))


class HitView(TypedDict):
    """One recall hit as the API answers it (retrieval's RecallHit.to_dict; a team server's too)."""

    id: str
    content: str
    score: float
    type: str
    project: str | None
    tags: list[str]
    created_at: str
    importance: float
    pinned: bool
    superseded_by: str | None
    legs: dict[str, dict[str, float]]
    reasons: list[str]
    sources: list[str]
    match: NotRequired[str]  # retrieval.match: strong | likely | weak (a team server's older answer: absent)


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
    needs_review: bool = False  # a learned claim below the confidence gate: kept, not shown unasked until reviewed
    session_key: str | None = None
    created_at: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    derived_from: list[str] = field(default_factory=list)
    id: str | None = None  # an imported memory keeps its id; one already stored with it is a duplicate
    writer: Viewer | None = None  # stamped by the service: author and team; duplicates only among what it sees
    type_explicit: bool = False  # the caller chose `type`: write rules keep it (no auto-protection)
    applies: str | None = None  # where a rule applies: 'project' | 'area' (Memory.applies)
    area: str | None = None  # an area rule's area (Memory.area)


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
    viewer: Viewer | None = None  # None or sees_all: no visibility rule (single-user daemon, admin)


class Selectable(Protocol):
    """What topic-diversity selection (retrieval.diversity) reads of a candidate: recall's packed hits
    and session start's candidates have it."""

    @property
    def score(self) -> float: ...
    @property
    def chars(self) -> int: ...
    @property
    def vector(self) -> np.ndarray | None: ...
