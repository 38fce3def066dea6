"""/api/review: what kenning learned by itself, grouped by session, with accept / edit / reject.

- GET  /api/review?status=pending|accepted|rejected|learned&project=&session_key=&limit=&offset=
- POST /api/review/{id}/accept
- POST /api/review/{id}/edit   {content?, type?}   (at least one)
- POST /api/review/{id}/reject {reason?}            (non-destructive: kept, never shown unasked)
- GET  /api/review/rules   per extraction rule: learned / pending / accepted / rejected
- GET  /api/review/sessions?keys=a,b   what each session was about and what it taught (Sessions tab)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import ConfigDict, Field

from kenning.api.deps import get_kenning, get_viewer
from kenning.api.schemas import Content, Offset, TypeName, _Body, errors
from kenning.core.types import Viewer
from kenning.service import Kenning

router = APIRouter(prefix="/api/review", tags=["review"])
Status = Annotated[str, Query(pattern="^(pending|accepted|rejected|learned|stale)$",
                              description="pending (default) | accepted | rejected | learned (all) | stale (rules "
                              "whose code was deleted or renamed)")]


class ReviewEditIn(_Body):
    """An edit names the new content, the new type, or both (the schema says so: anyOf)."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"anyOf": [
        {"required": ["content"], "properties": {"content": {"type": "string"}}},
        {"required": ["type"], "properties": {"type": {"type": "string"}}},
    ]})

    content: Content | None = None
    type: TypeName | None = None


class ReviewRejectIn(_Body):
    reason: Annotated[str, Field(max_length=500)] | None = None


@router.get("", responses=errors(400))
def list_review(status: Status = "pending", project: str | None = None, session_key: str | None = None,
                limit: int = Query(100, ge=1, le=500), offset: Offset = 0,
                k: Kenning = Depends(get_kenning), viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    return k.review.pending(status=status, project=project, session_key=session_key, limit=limit, offset=offset,
                            viewer=viewer)


@router.get("/rules")
def review_rules(k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:
    return k.review.rules()


@router.get("/sessions", responses=errors(400))
def review_sessions(keys: str = Query(..., max_length=20_000, description="Comma-separated session keys (at most 200)."),
                    k: Kenning = Depends(get_kenning), viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    """What each session was about (its task) and what it taught (learned memories, pending review)."""
    return k.review.sessions([key for key in keys.split(",") if key], viewer=viewer)


@router.post("/{memory_id}/accept", responses=errors(404))
def accept(memory_id: str, k: Kenning = Depends(get_kenning),
           viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    return k.review.accept(memory_id, actor="review-api", viewer=viewer)


@router.post("/{memory_id}/edit", responses=errors(400, 404))
def edit(memory_id: str, body: ReviewEditIn, k: Kenning = Depends(get_kenning),
         viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    return k.review.edit(memory_id, content=body.content, type=body.type, actor="review-api", viewer=viewer)


@router.post("/{memory_id}/reject", responses=errors(404))
def reject(memory_id: str, body: ReviewRejectIn | None = None, k: Kenning = Depends(get_kenning),
           viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    return k.review.reject(memory_id, reason=body.reason if body else None, actor="review-api", viewer=viewer)
