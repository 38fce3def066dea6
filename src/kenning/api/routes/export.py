"""/api/export: every live memory as JSON, JSONL, Markdown or a CLAUDE.md, streamed page by page."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import StreamingResponse

from kenning.api.deps import get_kenning, get_viewer
from kenning.api.schemas import errors
from kenning.core.limits import MAX_PROJECT_CHARS
from kenning.core.types import MemoryFilter, Viewer
from kenning.memory.portable import EXPORT_FORMATS, FILE_NAMES, MEDIA_TYPES
from kenning.service import Kenning

router = APIRouter(prefix="/api/export", tags=["export"])
ExportFormat = Literal[EXPORT_FORMATS]  # type: ignore[valid-type]


@router.get("", responses=errors(400), response_class=StreamingResponse,
            description="Live, current memories (not forgotten, not superseded); `kenning import` reads "
            "every format back, skipping the ids it already has.")
def export(format: ExportFormat = "json", project: Annotated[str | None, Query(max_length=MAX_PROJECT_CHARS)] = None,
           k: Kenning = Depends(get_kenning), viewer: Viewer = Depends(get_viewer)) -> StreamingResponse:
    chunks = k.export(format, MemoryFilter(project=project, viewer=viewer))
    return StreamingResponse(chunks, media_type=MEDIA_TYPES[format],
                             headers={"Content-Disposition": f'attachment; filename="{FILE_NAMES[format]}"'})
