"""/api/graph: browse the knowledge graph (entities, their relations, aspects, memories)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Query

from kenning.api.deps import get_kenning
from kenning.api.schemas import Offset, errors
from kenning.service import Kenning

router = APIRouter(prefix="/api/graph", tags=["graph"])


@router.get("/entities")
def list_entities(
    q: str | None = Query(None, max_length=200, description="Substring of the entity name."),
    type: str | None = Query(None, max_length=40, description="Entity type filter."),
    limit: int = Query(50, ge=1, le=1000), offset: Offset = 0,
    sort: Literal["mentions", "relations"] = Query(
        "mentions", description="mentions: most mentioned first; relations: most connected first (only entities"
        " with relations) — where the dashboard's Graph tab opens."),
    k: Kenning = Depends(get_kenning),
) -> dict:
    return k.entities(query=q, entity_type=type, limit=limit, offset=offset, order=sort)


@router.get("/entity/{entity}", responses=errors(404))
def get_entity(entity: str, memories: int = Query(50, ge=0, le=500), k: Kenning = Depends(get_kenning)) -> dict:
    """An entity by id or by name, with relations, aspects/attributes and mentioning memories."""
    return k.entity(entity, memory_limit=memories)
