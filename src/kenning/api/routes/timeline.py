"""/api/timeline/{id}: one session's or one memory's story in time order."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter, Depends, Query

from kenning.api.deps import get_kenning
from kenning.api.schemas import Offset, errors
from kenning.diagnostics.timeline import SOURCES
from kenning.service import Kenning

router = APIRouter(tags=["observability"])


@router.get("/api/timeline/{ident}", responses=errors(404))
def timeline(
    ident: str,
    source: str | None = Query(None, description="session, history, job, log, error or predictor",
                               json_schema_extra={"enum": list(SOURCES)}),
    limit: int = Query(500, ge=1, le=2000),
    offset: Offset = 0,
    k: Kenning = Depends(get_kenning),
) -> Mapping[str, object]:
    """History, jobs, logs, errors and predictor events for a session key or memory id."""
    return k.timeline(ident, source=source, limit=limit, offset=offset)
