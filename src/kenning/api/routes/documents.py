"""/api/documents: ingest pasted text or a URL as overlapping `document_chunk` memories."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter, Depends, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from kenning.api.deps import get_kenning
from kenning.api.schemas import Offset, errors
from kenning.memory import documents
from kenning.service import Kenning

router = APIRouter(prefix="/api/documents", tags=["documents"])


class DocumentIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    text: str | None = Field(None, description="Document text (plain, Markdown or HTML).")
    url: str | None = Field(None, max_length=4096, description="http(s) URL to fetch instead of text.")
    title: str | None = Field(None, max_length=500)
    project: str | None = Field(None, max_length=200)
    tags: list[str] = Field(default_factory=list, max_length=64)
    content_type: str | None = Field(None, max_length=100, description="e.g. text/html for HTML text.")
    wait: bool = Field(False, description="Ingest inside this request and return the result.")


@router.post("", status_code=202)
def create_document(body: DocumentIn, response: Response, k: Kenning = Depends(get_kenning)) -> dict:
    doc_id = k.submit_document(text=body.text, url=body.url, title=body.title, project=body.project,
                               tags=body.tags, content_type=body.content_type, enqueue=not body.wait)
    if not body.wait:
        return {"id": doc_id, "status": "queued"}
    try:
        result = k.ingest_document(doc_id)
    except Exception as exc:
        k.mark_document_failed(doc_id, f"{exc}")
        raise
    response.status_code = 200
    return {"id": doc_id, "status": "done", **result}


@router.get("")
def list_documents(status: str | None = None, limit: int = Query(50, ge=1, le=500), offset: Offset = 0,
                   k: Kenning = Depends(get_kenning)) -> dict:
    items, total = k.documents(status=status, limit=limit, offset=offset)
    return {"items": items, "total": total, "limit": limit, "offset": offset}


@router.get("/{doc_id}", responses=errors(404))
def get_document(doc_id: str, chunks: bool = False, k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:
    doc = k.document(doc_id, chunks=chunks)
    doc.pop("raw_content", None)
    return doc


@router.post("/{doc_id}/process", responses=errors(404))
def process_document(doc_id: str, k: Kenning = Depends(get_kenning)) -> dict:
    """Ingest a queued document now, in this request (idempotent: linked chunks are skipped)."""
    doc = k.document(doc_id)
    if doc["status"] == "done":
        return {"id": doc_id, "status": "done", "skipped": "already ingested"}
    try:
        result = k.ingest_document(doc_id)
    except documents.DocumentError as exc:
        k.mark_document_failed(doc_id, str(exc))
        raise
    return {"id": doc_id, "status": "done", **result}
