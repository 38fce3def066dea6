"""Read views of the knowledge graph for the API, the CLI and the dashboard."""

from __future__ import annotations

from dataclasses import asdict

from kenning.core.errors import NotFound
from kenning.store import graph as graph_store
from kenning.store.backend import Connection
from kenning.store.graph import Entity


def find(conn: Connection, id_or_name: str) -> Entity:
    """The entity with this id, else the one with this (canonical) name."""
    try:
        return graph_store.get_entity(conn, id_or_name)
    except NotFound:
        found = graph_store.find_entity(conn, id_or_name)
        if found is None:
            raise NotFound(f"no entity with id or name {id_or_name!r}") from None
        return found


def entity_view(conn: Connection, id_or_name: str, *, memory_limit: int = 50) -> dict[str, object]:
    """An entity with its relations, aspects (with attributes) and the memories that mention it."""
    entity = find(conn, id_or_name)
    relations = []
    for rel in graph_store.entity_relations(conn, entity.id):
        outgoing = rel.source_entity_id == entity.id
        relations.append({
            "id": rel.id, "type": rel.relation_type, "direction": "out" if outgoing else "in",
            "other_id": rel.target_entity_id if outgoing else rel.source_entity_id,
            "other_name": rel.target_name if outgoing else rel.source_name,
            "confidence": round(rel.confidence, 4), "mentions": rel.mentions, "strength": rel.strength,
        })
    return {
        **asdict(entity),
        "relations": relations,
        "aspects": graph_store.entity_aspects(conn, entity.id),
        "memories": graph_store.entity_memories(conn, entity.id, memory_limit),
    }


def entity_list(conn: Connection, *, query: str | None = None, entity_type: str | None = None,
                limit: int = 50, offset: int = 0, order: str = "mentions") -> dict[str, object]:
    items, total = graph_store.list_entities(conn, query=query, entity_type=entity_type, limit=limit, offset=offset,
                                             order=order)
    return {"items": [asdict(e) for e in items], "total": total, "limit": limit, "offset": offset,
            "stats": graph_store.graph_stats(conn)}
