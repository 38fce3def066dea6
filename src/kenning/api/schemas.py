"""Request and response bodies of the memory API (pydantic; validation errors become 4xx)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Annotated, Literal

from fastapi import Query
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from kenning.core import events, limits
from kenning.core.types import MEMORY_TYPES, SCOPES, MemoryDraft, MemoryFilter
from kenning.retrieval.config import PRESETS, Preset

if TYPE_CHECKING:  # the checker sees the names (a Literal built at run time is no static type)
    MemoryType = str
    Scope = str
else:
    MemoryType = Literal[tuple(sorted(MEMORY_TYPES))]
    Scope = Literal[tuple(sorted(SCOPES))]
# Type and scope of a stored memory: documented enums, checked by core validation (400 naming
# the choices), like every other write path (CLI, import).
TypeName = Annotated[str, Field(max_length=50, json_schema_extra={"enum": sorted(MEMORY_TYPES)})]
ScopeName = Annotated[str, Field(max_length=50, json_schema_extra={"enum": sorted(SCOPES)})]
Content = Annotated[str, Field(min_length=1, pattern=limits.VISIBLE_PATTERN,
                               description="Must hold a visible character; at most settings.recall.max_content_chars.")]
Tag = Annotated[str, Field(min_length=1, max_length=limits.MAX_TAG_CHARS, pattern=limits.VISIBLE_PATTERN)]
Tags = Annotated[list[Tag], Field(max_length=limits.MAX_TAGS)]
Project = Annotated[str, Field(max_length=limits.MAX_PROJECT_CHARS)]
Source = Annotated[str, Field(max_length=limits.MAX_SOURCE_CHARS)]
SessionKey = events.SessionKey  # the one session-key type: normalised as it is read (issue 33)
Paths = Annotated[list[Annotated[str, Field(max_length=limits.MAX_PATH_CHARS)]],
                  Field(max_length=limits.MAX_RELATED_FILES)]


def _iso_string(value: object) -> str | datetime:
    if not isinstance(value, (str, datetime)):
        raise ValueError("must be an ISO 8601 date-time string")
    return value


def _utc(value: datetime) -> datetime:
    try:
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)
    except OverflowError as exc:
        raise ValueError("is outside the calendar once converted to UTC") from exc


def _whole_number(value: object) -> object:
    return int(value) if isinstance(value, float) and value.is_integer() else value


# JSON Schema's integer: 5 and 5.0, never "5" or true (bodies are strict otherwise).
Int = Annotated[int, BeforeValidator(_whole_number)]
# An ISO 8601 string only (no numbers), as an aware UTC datetime.
IsoTime = Annotated[datetime, Field(strict=False), BeforeValidator(_iso_string), AfterValidator(_utc)]
Offset = Annotated[int, Query(ge=0, le=limits.MAX_OFFSET, description="Rows to skip (at most 2^63-1).")]


class _Body(BaseModel):
    """JSON bodies: unknown keys refused, no coercion (0 is not false, "1" is not 1)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class ErrorOut(BaseModel):
    error: str = Field(description="What was wrong and, where it helps, how to fix it.")


ERROR_REF = "#/components/schemas/ErrorOut"
ERROR_DESCRIPTIONS = {
    400: "Bad input, with a message.",
    404: "Nothing with that id or name.",
    409: "The request clashes with the current state (e.g. the predictor is not part of this daemon).",
    502: "An embedding or LLM provider failed.",
    503: "The store is busy or unavailable.",
}


def errors(*codes: int) -> dict[int | str, dict[str, object]]:
    """`responses=` for a route: each status it can answer besides success, with ErrorOut."""
    return {code: {"model": ErrorOut, "description": ERROR_DESCRIPTIONS[code]} for code in codes}


class RememberIn(_Body):
    content: Content
    type: TypeName | None = Field(None, description="Memory type; when given it is kept as is. Default fact "
                                  "(constraint when the text states a decision or rule of its own).")
    importance: float = Field(0.5, ge=0, le=1)
    confidence: float = Field(1.0, ge=0, le=1)
    tags: Tags = Field(default_factory=list)
    project: Project | None = None
    scope: ScopeName = "project"
    pinned: bool = False
    source: Source | None = None
    session_key: SessionKey | None = None
    created_at: IsoTime | None = Field(None, description="ISO 8601 between 1970 and a day from now; "
                                        "lets imports keep original dates.")
    related_files: Paths = Field(default_factory=list)
    metadata: dict[str, object] = Field(default_factory=dict, description=f"At most {limits.MAX_METADATA_BYTES} "
                                     "bytes as JSON.")
    derived_from: Annotated[list[Annotated[str, Field(max_length=200)]], Field(max_length=limits.MAX_RELATED_FILES)] = \
        Field(default_factory=list, description="Ids of the memories this one derives from.")
    id: Annotated[str, Field(pattern=limits.MEMORY_ID_PATTERN)] | None = Field(
        None, description="Keep this id (imports, exports read back); a memory stored with it already is "
        "answered as a duplicate.")
    applies: Literal["project", "area"] | None = Field(
        None, description="Where a rule applies: project (everywhere in its project; may open sessions) or area "
        "(one file, symbol, module, command or topic; shown when it comes up). Default: told from its words.")
    area: Annotated[str, Field(max_length=200)] | None = Field(None, description="An area rule's area (a symbol, "
                                                               "file, module, command or topic).")

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


class RememberBatchOut(BaseModel):
    results: list[RememberOut]


class RecallIn(_Body):
    query: str = Field(..., min_length=1, max_length=limits.MAX_QUERY_CHARS)
    limit: Annotated[int, Field(ge=1, le=200), BeforeValidator(_whole_number)] | None = Field(  # bounds in the schema
        None, description="How many memories; default recall.default_limit.")
    project: Project | None = None
    types: list[MemoryType] | None = None
    tags: list[Annotated[str, Field(max_length=limits.MAX_TAG_CHARS)]] | None = Field(None, max_length=limits.MAX_TAGS)
    scope: Scope | None = None
    since: IsoTime | None = None
    until: IsoTime | None = None
    include_superseded: bool = False
    budget_chars: Annotated[int, Field(ge=1, le=1_000_000), BeforeValidator(_whole_number)] | None = None
    preset: Preset | None = Field(None, strict=False, description="Recall preset: " + ", ".join(PRESETS) + ".")

    def to_filter(self) -> MemoryFilter:
        return MemoryFilter(
            project=self.project, types=self.types, tags=self.tags, scope=self.scope,
            since=self.since.isoformat() if self.since else None,
            until=self.until.isoformat() if self.until else None,
            include_superseded=self.include_superseded,
        )


NULLABLE_EDITS = ("project", "source")


class EditIn(_Body):
    content: Content | None = None
    type: TypeName | None = None
    importance: float | None = Field(None, ge=0, le=1)
    confidence: float | None = Field(None, ge=0, le=1)
    tags: Tags | None = None
    project: Project | None = None
    scope: ScopeName | None = None
    pinned: bool | None = None
    needs_review: bool | None = None
    user_verified: bool | None = None
    source: Source | None = None
    reason: Annotated[str, Field(max_length=1000)] | None = None

    def changes(self) -> dict[str, object]:
        """Fields sent, less `reason`; null means "leave as is" except for project and source."""
        return {k: v for k, v in self.model_dump(exclude_unset=True).items()
                if k != "reason" and (v is not None or k in NULLABLE_EDITS)}
