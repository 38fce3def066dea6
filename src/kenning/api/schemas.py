"""Request and response bodies of the memory API (pydantic; validation errors become 4xx)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kenning.core.types import MemoryDraft, MemoryFilter


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)


class RememberIn(_Body):
    content: str = Field(..., description="What to remember (max settings.recall.max_content_chars).")
    type: str | None = Field(None, description="Memory type; when given it is kept as is. Default fact "
                             "(constraint when the text states a decision or rule of its own).")
    importance: float = Field(0.5, ge=0, le=1)
    confidence: float = Field(1.0, ge=0, le=1)
    tags: list[str] = Field(default_factory=list)
    project: str | None = None
    scope: str = "project"
    pinned: bool = False
    source: str | None = None
    session_key: str | None = None
    created_at: datetime | None = Field(None, description="ISO 8601; lets imports keep original dates.")
    related_files: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    derived_from: list[str] = Field(default_factory=list, description="Ids of the memories this one derives from.")

    def to_draft(self) -> MemoryDraft:
        data = self.model_dump()
        data["created_at"] = self.created_at.isoformat() if self.created_at else None
        data["type_explicit"] = self.type is not None
        data["type"] = self.type or "fact"
        return MemoryDraft(**data)


class RememberBatchIn(_Body):
    memories: list[RememberIn] = Field(..., max_length=5000)


class RememberOut(BaseModel):
    id: str
    deduped: bool


class RecallIn(_Body):
    query: str = Field(..., min_length=1, max_length=10_000)
    limit: int = Field(10, ge=1, le=200)
    project: str | None = None
    types: list[str] | None = None
    tags: list[str] | None = None
    scope: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    include_superseded: bool = False
    budget_chars: int | None = Field(None, ge=1, le=1_000_000)
    preset: str | None = Field(None, description="Recall preset: bm25, dense, hybrid, default.")

    def to_filter(self) -> MemoryFilter:
        return MemoryFilter(
            project=self.project, types=self.types, tags=self.tags, scope=self.scope,
            since=self.since.isoformat() if self.since else None,
            until=self.until.isoformat() if self.until else None,
            include_superseded=self.include_superseded,
        )


class EditIn(_Body):
    content: str | None = None
    type: str | None = None
    importance: float | None = Field(None, ge=0, le=1)
    confidence: float | None = Field(None, ge=0, le=1)
    tags: list[str] | None = None
    project: str | None = None
    scope: str | None = None
    pinned: bool | None = None
    needs_review: bool | None = None
    user_verified: bool | None = None
    source: str | None = None
    reason: str | None = None

    def changes(self) -> dict[str, Any]:
        return {k: v for k, v in self.model_dump(exclude_unset=True).items() if k != "reason"}
