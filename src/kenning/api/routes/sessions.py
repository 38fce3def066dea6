"""/api/sessions: list and inspect sessions (candidates, injections, feedback, scores)."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter, Depends, Query
from fastapi.responses import PlainTextResponse

from kenning.api.deps import get_kenning
from kenning.api.openapi import ERROR_CONTENT
from kenning.api.schemas import ERROR_DESCRIPTIONS, Offset, errors
from kenning.service import Kenning

router = APIRouter(prefix="/api/sessions", tags=["sessions"])


@router.get("")
def list_sessions(
    limit: int = Query(50, ge=1, le=1000), offset: Offset = 0, project: str | None = None,
    k: Kenning = Depends(get_kenning),
) -> dict:
    return {**k.sessions.list(limit=limit, offset=offset, project=project), "limit": limit, "offset": offset}


@router.get("/{session_key}", responses=errors(404))
def session_detail(session_key: str, k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:
    return k.sessions.detail(session_key)


@router.get("/{session_key}/transcript", response_class=PlainTextResponse, responses={404: {
    "description": ERROR_DESCRIPTIONS[404], "content": ERROR_CONTENT}})
def session_transcript(session_key: str, k: Kenning = Depends(get_kenning)) -> str:
    return k.sessions.transcript(session_key)
