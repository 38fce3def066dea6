"""/api/memory: remember, recall, get, edit, forget, recover, purge, list, history."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from fastapi import APIRouter, BackgroundTasks, Depends, Query

from kenning.api.deps import get_kenning, get_viewer
from kenning.api.schemas import (EditIn, Offset, RecallIn, RememberBatchIn, RememberBatchOut, RememberIn,
                                 RememberOut, errors)
from kenning.core.errors import InvalidInput
from kenning.core.types import MemoryFilter, Viewer
from kenning.retrieval.config import PRESETS, Preset
from kenning.service import Kenning, MemoryView

router = APIRouter(prefix="/api/memory", tags=["memory"])


@router.post("/remember", response_model=RememberOut)
def remember(body: RememberIn, k: Kenning = Depends(get_kenning), viewer: Viewer = Depends(get_viewer)) -> RememberOut:
    result = k.remember(body.to_draft(), actor=body.source or "api", viewer=viewer)
    return RememberOut(id=result.id, deduped=result.deduped)


@router.post("/batch", response_model=RememberBatchOut)
def remember_batch(body: RememberBatchIn, k: Kenning = Depends(get_kenning),
                   viewer: Viewer = Depends(get_viewer)) -> dict:
    results = k.remember_many([m.to_draft() for m in body.memories], actor="api-batch", viewer=viewer)
    return {"results": [{"id": r.id, "deduped": r.deduped} for r in results]}


@router.post("/recall")
def recall(body: RecallIn, background: BackgroundTasks, k: Kenning = Depends(get_kenning),
           viewer: Viewer = Depends(get_viewer)) -> dict:
    hits = k.recall(body.query, limit=body.limit, filters=replace(body.to_filter(), viewer=viewer),
                    config=body.preset, budget_chars=body.budget_chars)  # body.preset: validated (Preset enum)
    results = [h.to_dict() for h in hits]
    if not k.team.enabled:
        return {"query": body.query, "results": results}
    merged, team = k.team.merge_recall(body.model_dump(mode="json", exclude_none=True), results,
                                       body.limit or k.settings.recall.default_limit)
    return {"query": body.query, "results": merged, "team": team}


@router.get("/recall/config")
def recall_config(preset: Preset | None = Query(None, description="Recall preset: " + ", ".join(PRESETS) + "."),
                  k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:  # a ConfigExplained
    """The effective config a recall with `preset` runs with in this daemon (`kenning recall --explain`):
    its settings as loaded at start, merged with the preset."""
    return k.recall_config(preset).explain()


@router.get("")
def list_memories(
    limit: int = Query(50, ge=1, le=1000), offset: Offset = 0,
    project: str | None = None, type: str | None = None, tag: str | None = None,
    include_deleted: bool = False, include_superseded: bool = True, session_key: str | None = None,
    k: Kenning = Depends(get_kenning), viewer: Viewer = Depends(get_viewer),
) -> dict:
    filters = MemoryFilter(project=project, types=[type] if type else None, tags=[tag] if tag else None,
                           include_deleted=include_deleted, include_superseded=include_superseded,
                           session_key=session_key, viewer=viewer)
    items, total = k.list(filters, limit=limit, offset=offset)
    return {"items": [m.to_dict() for m in items], "total": total, "limit": limit, "offset": offset}


@router.get("/{memory_id}", responses=errors(404))
def get_memory(memory_id: str, k: Kenning = Depends(get_kenning),
               viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    found = k.get(memory_id, viewer)
    memory: MemoryView = {**found.to_dict(), "history": k.history(memory_id, viewer),
                          "lifecycle": k.observer.lifecycle_of(found)}  # trust level, decayed confidence, half-life
    return memory


@router.patch("/{memory_id}", responses=errors(404))
def edit_memory(memory_id: str, body: EditIn, k: Kenning = Depends(get_kenning),
                viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    changes = body.changes()
    if not changes:
        raise InvalidInput("nothing to change: send at least one field")
    return k.edit(memory_id, changes, actor="api", reason=body.reason, viewer=viewer).to_dict()


@router.delete("/{memory_id}", responses=errors(404))
def forget_memory(memory_id: str, purge: bool = False, reason: str | None = None,
                  k: Kenning = Depends(get_kenning), viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    if purge:
        k.purge(memory_id, actor="api", reason=reason, viewer=viewer)
        return {"id": memory_id, "purged": True}
    return k.forget(memory_id, actor="api", reason=reason, viewer=viewer).to_dict()


@router.post("/{memory_id}/recover", responses=errors(404, 409))
def recover_memory(memory_id: str, k: Kenning = Depends(get_kenning),
                   viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    return k.recover(memory_id, actor="api", viewer=viewer).to_dict()
