"""All SQL on the knowledge graph: entities, relations, mentions, aspects, attributes.

Write functions take the connection yielded by `db.with_write_tx()` and never commit;
call them inside the same transaction as the memory write they describe (the inline
linker) or in their own short transaction (the extraction pipeline). Read functions take
any reader connection.

Identity rules (memory-pipeline-v2 "Knowledge Graph"):
- an entity is identified by `canonical_name(name)` (lowercase, whitespace-collapsed);
  the first spelling seen is kept in `name`.
- `entities.mentions` is the number of memory_entity_mentions rows for the entity,
  maintained by triggers, so re-linking the same memory never inflates it.
- a relation is identified by (source, target, relation_type); seeing it again bumps
  `mentions` and folds the new confidence into a running average
  `(old * n + new) / (n + 1)`. `strength` stays 1.0.

Typical use by the extraction pipeline, inside one write transaction::

    from kenning.store import graph
    graph.persist_triples(conn, memory_id, [
        {"source": "billing", "relationship": "uses", "target": "PostgreSQL", "confidence": 0.8},
    ])
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import NotRequired, TypedDict, cast

from kenning.core import secrets
from kenning.core.clock import now_iso
from kenning.core.errors import InvalidInput, NotFound
from kenning.core.text import SPEAKER_LABELS
from kenning.core.types import MemoryFilter
from kenning.store.backend import Connection, Row
from kenning.store.memories import filter_sql

ENTITY_TYPES = frozenset(
    {"person", "project", "system", "tool", "concept", "skill", "task", "file", "unknown", "extracted"}
)
ATTRIBUTE_KINDS = frozenset({"attribute", "constraint"})
MAX_NAME_CHARS = 200
_WS = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Entity:
    """A named thing of the knowledge graph (entities)."""

    id: str
    name: str
    canonical_name: str
    entity_type: str
    mentions: int
    description: str | None
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class EntityRelation:
    """A relation touching an entity, with both ends' names."""

    id: str
    source_entity_id: str
    target_entity_id: str
    relation_type: str
    strength: float
    mentions: int
    confidence: float
    created_at: str
    updated_at: str
    source_name: str
    target_name: str


class EntityMemory(TypedDict):
    """A live memory that mentions an entity."""

    id: str
    content: str
    type: str
    importance: float
    project: str | None
    created_at: str
    mention_text: str
    mention_confidence: float


class EntityMatch(TypedDict):
    id: str
    name: str
    canonical_name: str
    mentions: int


class NeighborEntity(TypedDict):
    id: str
    name: str
    mentions: int
    confidence: float


class MemoryEntityLink(TypedDict):
    memory_id: str
    entity_id: str
    confidence: float


_ENTITY_COLUMNS = "id, name, canonical_name, entity_type, mentions, description, created_at, updated_at"


def _entity(row: Row) -> Entity:
    return Entity(row["id"], row["name"], row["canonical_name"], row["entity_type"], row["mentions"],
                  row["description"], row["created_at"], row["updated_at"])
_GENERIC_TYPES = ("unknown", "extracted")


def canonical_name(name: str) -> str:
    """The identity key of an entity: trimmed, whitespace-collapsed, lowercased."""
    return _WS.sub(" ", name).strip().lower()


def _new_id() -> str:
    return uuid.uuid4().hex[:16]


def _clamp01(value: float) -> float:
    return max(0.0, min(1.0, float(value)))


# -- writes -------------------------------------------------------------------------------

def upsert_entity(conn: Connection, name: str, entity_type: str = "unknown", *, at: str | None = None) -> str:
    """Insert an entity or return the id of the one with the same canonical name.

    A specific type replaces a generic one ('unknown'/'extracted'); otherwise the first
    type wins. Mentions are not touched here: `link_mention` counts them.
    """
    clean = _WS.sub(" ", name).strip()[:MAX_NAME_CHARS]
    canon = canonical_name(clean)
    if not canon:
        raise InvalidInput("entity name is empty")
    etype = entity_type if entity_type in ENTITY_TYPES else "unknown"
    stamp = at or now_iso()
    row = conn.execute("SELECT id, entity_type FROM entities WHERE canonical_name = ?", (canon,)).fetchone()
    if row is not None:
        if row["entity_type"] in _GENERIC_TYPES and etype not in _GENERIC_TYPES:
            conn.execute("UPDATE entities SET entity_type = ?, updated_at = ? WHERE id = ?",
                         (etype, stamp, row["id"]))
        return str(row["id"])
    entity_id = _new_id()
    conn.execute(
        "INSERT INTO entities(id, name, canonical_name, entity_type, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (entity_id, clean, canon, etype, stamp, stamp),
    )
    return entity_id


def set_entity_type(conn: Connection, entity_id: str, entity_type: str) -> None:
    """Set an entity's type (structural classification); unknown types are rejected."""
    if entity_type not in ENTITY_TYPES:
        raise InvalidInput(f"unknown entity type {entity_type!r}")
    conn.execute("UPDATE entities SET entity_type = ?, updated_at = ? WHERE id = ?",
                 (entity_type, now_iso(), entity_id))


def link_mention(
    conn: Connection, memory_id: str, entity_id: str, mention_text: str, *, confidence: float = 1.0,
    source: str = "linker", at: str | None = None,
) -> bool:
    """Record that `memory_id` mentions `entity_id` (INSERT OR IGNORE). True if new."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO memory_entity_mentions(memory_id, entity_id, mention_text, confidence,"
        " source, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (memory_id, entity_id, mention_text[:MAX_NAME_CHARS], _clamp01(confidence), source, at or now_iso()),
    )
    return cur.rowcount > 0


def upsert_relation(
    conn: Connection, source_id: str, target_id: str, relation_type: str, *, confidence: float = 0.5,
    at: str | None = None,
) -> str:
    """Insert a relation or fold `confidence` into the running average of the existing one."""
    rtype = _WS.sub("_", relation_type.strip().lower())[:100]
    if not rtype:
        raise InvalidInput("relation type is empty")
    stamp = at or now_iso()
    conf = _clamp01(confidence)
    row = conn.execute(
        "SELECT id, mentions, confidence FROM relations"
        " WHERE source_entity_id = ? AND target_entity_id = ? AND relation_type = ?",
        (source_id, target_id, rtype),
    ).fetchone()
    if row is not None:
        n = row["mentions"]
        avg = (row["confidence"] * n + conf) / (n + 1)
        conn.execute(
            "UPDATE relations SET mentions = mentions + 1, confidence = ?, updated_at = ? WHERE id = ?",
            (avg, stamp, row["id"]),
        )
        return str(row["id"])
    relation_id = _new_id()
    conn.execute(
        "INSERT INTO relations(id, source_entity_id, target_entity_id, relation_type, strength, mentions,"
        " confidence, created_at, updated_at) VALUES (?, ?, ?, ?, 1.0, 1, ?, ?, ?)",
        (relation_id, source_id, target_id, rtype, conf, stamp, stamp),
    )
    return relation_id


class TripleIn(TypedDict, total=False):
    """One extracted triple to persist: source, relationship and target are required in practice
    (an empty part is skipped, not an error); confidence defaults to 0.5, the entity types to
    'extracted'."""

    source: str
    relationship: str
    target: str
    confidence: float
    source_type: str
    target_type: str


def persist_triples(
    conn: Connection, memory_id: str | None, triples: Iterable[TripleIn], *, source: str = "pipeline"
) -> dict[str, int]:
    """Write extracted (source, relationship, target, confidence) triples.

    Each triple is a mapping with keys `source`, `relationship`, `target`, optional
    `confidence` (default 0.5), `source_type`, `target_type`. Both entities are upserted,
    linked to `memory_id` (when given) and joined by a relation. Invalid triples (empty
    parts) are skipped. Returns counts: entities, relations, mentions, skipped.
    """
    counts = {"entities": 0, "relations": 0, "mentions": 0, "skipped": 0}
    seen: set[str] = set()
    for triple in triples:
        src = str(triple.get("source") or "").strip()
        dst = str(triple.get("target") or "").strip()
        rel = str(triple.get("relationship") or "").strip()
        if (not src or not dst or not rel or canonical_name(src) == canonical_name(dst)
                or canonical_name(src) in SPEAKER_LABELS or canonical_name(dst) in SPEAKER_LABELS
                or secrets.MARKER_PREFIX in src + dst or secrets.scan(src) or secrets.scan(dst)):
            counts["skipped"] += 1
            continue
        conf = float(triple.get("confidence", 0.5) or 0.5)
        src_id = upsert_entity(conn, src, str(triple.get("source_type") or "extracted"))
        dst_id = upsert_entity(conn, dst, str(triple.get("target_type") or "extracted"))
        counts["entities"] += len({src_id, dst_id} - seen)
        seen.update((src_id, dst_id))
        upsert_relation(conn, src_id, dst_id, rel, confidence=conf)
        counts["relations"] += 1
        if memory_id:
            counts["mentions"] += link_mention(conn, memory_id, src_id, src, confidence=conf, source=source)
            counts["mentions"] += link_mention(conn, memory_id, dst_id, dst, confidence=conf, source=source)
    return counts


def upsert_aspect(conn: Connection, entity_id: str, name: str, *, at: str | None = None) -> str:
    """Insert an aspect of an entity or return the existing one with that canonical name."""
    canon = canonical_name(name)
    if not canon:
        raise InvalidInput("aspect name is empty")
    row = conn.execute(
        "SELECT id FROM entity_aspects WHERE entity_id = ? AND canonical_name = ?", (entity_id, canon)
    ).fetchone()
    if row is not None:
        return str(row["id"])
    aspect_id = _new_id()
    stamp = at or now_iso()
    conn.execute(
        "INSERT INTO entity_aspects(id, entity_id, name, canonical_name, weight, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, 0.5, ?, ?)",
        (aspect_id, entity_id, name.strip()[:MAX_NAME_CHARS], canon, stamp, stamp),
    )
    return aspect_id


def add_attribute(
    conn: Connection, entity_id: str, content: str, *, memory_id: str | None = None, aspect_id: str | None = None,
    kind: str = "attribute", confidence: float = 0.5, importance: float = 0.5, at: str | None = None,
) -> str:
    """Attach a fact to an entity (idempotent per entity, memory and normalized content)."""
    if kind not in ATTRIBUTE_KINDS:
        raise InvalidInput(f"attribute kind must be one of {sorted(ATTRIBUTE_KINDS)}, not {kind!r}")
    text = _WS.sub(" ", content).strip()
    if not text:
        raise InvalidInput("attribute content is empty")
    normalized = text.lower()
    row = conn.execute(
        "SELECT id FROM entity_attributes WHERE entity_id = ? AND memory_id IS ? AND normalized_content = ?",
        (entity_id, memory_id, normalized),
    ).fetchone()
    if row is not None:
        return str(row["id"])
    attr_id = _new_id()
    stamp = at or now_iso()
    conn.execute(
        "INSERT INTO entity_attributes(id, entity_id, aspect_id, memory_id, kind, content, normalized_content,"
        " confidence, importance, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (attr_id, entity_id, aspect_id, memory_id, kind, text, normalized, _clamp01(confidence),
         _clamp01(importance), stamp, stamp),
    )
    return attr_id


def classify_attribute(conn: Connection, attribute_id: str, *, aspect_id: str | None, kind: str) -> None:
    """Fill in an attribute's aspect and kind (structural classification)."""
    if kind not in ATTRIBUTE_KINDS:
        raise InvalidInput(f"attribute kind must be one of {sorted(ATTRIBUTE_KINDS)}, not {kind!r}")
    conn.execute("UPDATE entity_attributes SET aspect_id = ?, kind = ?, updated_at = ? WHERE id = ?",
                 (aspect_id, kind, now_iso(), attribute_id))


def bump_aspect_weights(
    conn: Connection, increments: Mapping[str, float], *, min_weight: float, max_weight: float
) -> int:
    """Add increments[aspect_id] to each aspect's weight, clamped to [min, max]. Returns rows changed."""
    stamp = now_iso()
    changed = 0
    for aspect_id, inc in increments.items():
        cur = conn.execute(
            "UPDATE entity_aspects SET weight = MIN(?, MAX(?, weight + ?)), updated_at = ? WHERE id = ?",
            (max_weight, min_weight, inc, stamp, aspect_id),
        )
        changed += cur.rowcount
    return changed


def decay_stale_aspects(conn: Connection, *, stale_before: str, rate: float, min_weight: float) -> int:
    """Reduce by `rate` the weight of aspects not updated since `stale_before`, floored at min."""
    cur = conn.execute(
        "UPDATE entity_aspects SET weight = MAX(?, weight - ?), updated_at = ?"
        " WHERE updated_at < ? AND weight > ?",
        (min_weight, rate, now_iso(), stale_before, min_weight),
    )
    return cur.rowcount


# -- reads --------------------------------------------------------------------------------

def has_mentions(conn: Connection, memory_id: str, source: str | None = None) -> bool:
    """True when the memory already has mention rows (from `source`, when given)."""
    row = conn.execute(
        "SELECT 1 FROM memory_entity_mentions WHERE memory_id = ? AND (? IS NULL OR source = ?) LIMIT 1",
        (memory_id, source, source),
    ).fetchone()
    return row is not None


def get_entity(conn: Connection, entity_id: str) -> Entity:
    row = conn.execute(f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE id = ?", (entity_id,)).fetchone()
    if row is None:
        raise NotFound(f"no entity with id {entity_id!r}")
    return _entity(row)


def find_entity(conn: Connection, name: str) -> Entity | None:
    """The entity whose canonical name equals canonical_name(name), or None."""
    row = conn.execute(f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE canonical_name = ?",
                       (canonical_name(name),)).fetchone()
    return _entity(row) if row else None


_ENTITY_ORDER = {
    "mentions": "mentions DESC, canonical_name",
    # most connected first; only entities that have relations (a lone frequent word is noise)
    "relations": "(SELECT COUNT(*) FROM relations r WHERE r.source_entity_id = entities.id"
                 " OR r.target_entity_id = entities.id) DESC, mentions DESC, canonical_name",
}


def list_entities(
    conn: Connection, *, query: str | None = None, entity_type: str | None = None, limit: int = 50, offset: int = 0,
    order: str = "mentions",
) -> tuple[list[Entity], int]:
    """Entities by mentions or by relations (desc), optionally filtered by a name substring and type."""
    clauses, params = ["1 = 1"], []
    if order == "relations":
        clauses.append("EXISTS (SELECT 1 FROM relations r WHERE r.source_entity_id = entities.id"
                       " OR r.target_entity_id = entities.id)")
    if query:
        clauses.append("canonical_name LIKE ? ESCAPE '\\'")
        escaped = canonical_name(query).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        params.append(f"%{escaped}%")
    if entity_type:
        clauses.append("entity_type = ?")
        params.append(entity_type)
    where = " AND ".join(clauses)
    total = conn.execute(f"SELECT COUNT(*) FROM entities WHERE {where}", params).fetchone()[0]
    rows = conn.execute(
        f"SELECT {_ENTITY_COLUMNS} FROM entities WHERE {where} ORDER BY {_ENTITY_ORDER[order]} LIMIT ? OFFSET ?",
        params + [limit, offset],
    ).fetchall()
    return [_entity(r) for r in rows], total


def entity_relations(conn: Connection, entity_id: str, limit: int = 100) -> list[EntityRelation]:
    """Relations touching the entity in either direction, with both names."""
    rows = conn.execute(
        "SELECT r.id, r.source_entity_id, r.target_entity_id, r.relation_type, r.strength, r.mentions,"
        " r.confidence, r.created_at, r.updated_at, s.name AS source_name, t.name AS target_name FROM relations r"
        " JOIN entities s ON s.id = r.source_entity_id JOIN entities t ON t.id = r.target_entity_id"
        " WHERE r.source_entity_id = ? OR r.target_entity_id = ?"
        " ORDER BY r.mentions DESC, r.confidence DESC LIMIT ?",
        (entity_id, entity_id, limit),
    ).fetchall()
    return [EntityRelation(r["id"], r["source_entity_id"], r["target_entity_id"], r["relation_type"], r["strength"],
                           r["mentions"], r["confidence"], r["created_at"], r["updated_at"], r["source_name"],
                           r["target_name"]) for r in rows]


class EntityAttribute(TypedDict):
    """An entity_attributes row: a fact about an entity, kind 'attribute' or 'constraint'."""

    id: str
    entity_id: str
    aspect_id: str | None
    memory_id: str | None
    kind: str
    content: str
    normalized_content: str
    confidence: float
    importance: float
    status: str
    superseded_by: str | None
    created_at: str
    updated_at: str


class EntityAspect(TypedDict):
    """An entity_aspects row with its attributes; the '(unclassified)' aspect that gathers the
    attributes of no aspect has only id (None), name, weight and attributes."""

    id: str | None
    entity_id: NotRequired[str]
    name: str
    canonical_name: NotRequired[str]
    weight: float
    created_at: NotRequired[str]
    updated_at: NotRequired[str]
    attributes: list[EntityAttribute]


def entity_aspects(conn: Connection, entity_id: str) -> list[EntityAspect]:
    """Aspects of an entity (by weight) each with its attributes (constraints first)."""
    aspects = [cast(EntityAspect, dict(r)) for r in conn.execute(
        "SELECT * FROM entity_aspects WHERE entity_id = ? ORDER BY weight DESC, canonical_name", (entity_id,)
    )]
    attrs = [cast(EntityAttribute, dict(r)) for r in conn.execute(
        "SELECT * FROM entity_attributes WHERE entity_id = ? AND status = 'active'"
        " ORDER BY kind = 'constraint' DESC, importance DESC, created_at DESC", (entity_id,)
    )]
    by_aspect: dict[str | None, list[EntityAttribute]] = {}
    for attr in attrs:
        by_aspect.setdefault(attr["aspect_id"], []).append(attr)
    for aspect in aspects:
        aspect["attributes"] = by_aspect.pop(aspect["id"], [])
    if by_aspect:
        loose = [a for group in by_aspect.values() for a in group]
        aspects.append({"id": None, "name": "(unclassified)", "weight": 0.0, "attributes": loose})
    return aspects


def entity_memories(conn: Connection, entity_id: str, limit: int = 50) -> list[EntityMemory]:
    """Live memories that mention the entity, newest first."""
    rows = conn.execute(
        "SELECT m.id, m.content, m.type, m.importance, m.project, m.created_at, mem.mention_text,"
        " mem.confidence AS mention_confidence FROM memory_entity_mentions mem"
        " JOIN memories m ON m.id = mem.memory_id WHERE mem.entity_id = ? AND m.is_deleted = 0"
        " ORDER BY m.created_at DESC LIMIT ?",
        (entity_id, limit),
    ).fetchall()
    return [cast(EntityMemory, dict(r)) for r in rows]


def match_entities_by_tokens(conn: Connection, tokens: Iterable[str], limit: int = 20) -> list[EntityMatch]:
    """Entities whose canonical name equals a token or contains it as a whole word.

    Ordered by mentions (desc), at most `limit` (v2: 20 entity hits).
    """
    toks = [t for t in dict.fromkeys(tokens) if len(t) >= 2][:32]
    if not toks:
        return []
    clauses, params = [], []
    for tok in toks:
        esc = tok.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        clauses.append("(canonical_name = ? OR canonical_name LIKE ? ESCAPE '\\'"
                       " OR canonical_name LIKE ? ESCAPE '\\' OR canonical_name LIKE ? ESCAPE '\\')")
        params += [tok, f"{esc} %", f"% {esc}", f"% {esc} %"]
    rows = conn.execute(
        f"SELECT id, name, canonical_name, mentions FROM entities WHERE {' OR '.join(clauses)}"
        " ORDER BY mentions DESC LIMIT ?",
        params + [limit],
    ).fetchall()
    return [cast(EntityMatch, dict(r)) for r in rows]


def neighbor_entities(conn: Connection, entity_ids: list[str], limit: int = 50) -> list[NeighborEntity]:
    """Entities one hop away through relations (both directions), strongest first."""
    if not entity_ids:
        return []
    marks = ",".join("?" * len(entity_ids))
    rows = conn.execute(
        f"SELECT e.id, e.name, e.mentions, MAX(r.confidence) AS confidence FROM relations r"
        f" JOIN entities e ON e.id = CASE WHEN r.source_entity_id IN ({marks})"
        f"   THEN r.target_entity_id ELSE r.source_entity_id END"
        f" WHERE (r.source_entity_id IN ({marks}) OR r.target_entity_id IN ({marks}))"
        f"   AND e.id NOT IN ({marks})"
        f" GROUP BY e.id ORDER BY confidence DESC, e.mentions DESC LIMIT ?",
        entity_ids * 4 + [limit],
    ).fetchall()
    return [cast(NeighborEntity, dict(r)) for r in rows]


def memories_for_entities(
    conn: Connection, entity_ids: list[str], *, limit: int = 200, filters: MemoryFilter | None = None
) -> list[MemoryEntityLink]:
    """(memory_id, entity_id, confidence) links for live memories passing `filters`.

    At most `limit` distinct memories, newest first.
    """
    if not entity_ids:
        return []
    marks = ",".join("?" * len(entity_ids))
    where, params = filter_sql(filters, "m")
    rows = conn.execute(
        f"WITH picked AS (SELECT DISTINCT m.id, m.created_at FROM memory_entity_mentions mem"
        f"  JOIN memories m ON m.id = mem.memory_id"
        f"  WHERE mem.entity_id IN ({marks}) AND {where} ORDER BY m.created_at DESC LIMIT ?)"
        f" SELECT mem.memory_id, mem.entity_id, mem.confidence FROM memory_entity_mentions mem"
        f" JOIN picked p ON p.id = mem.memory_id WHERE mem.entity_id IN ({marks})",
        entity_ids + params + [limit] + entity_ids,
    ).fetchall()
    return [cast(MemoryEntityLink, dict(r)) for r in rows]


def entities_for_memories(conn: Connection, memory_ids: list[str]) -> dict[str, list[tuple[str, int]]]:
    """memory_id → [(entity_id, entity mentions)] for the given memories."""
    found: dict[str, list[tuple[str, int]]] = {}
    for start in range(0, len(memory_ids), 500):
        chunk = memory_ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
            f"SELECT mem.memory_id, e.id, e.mentions FROM memory_entity_mentions mem"
            f" JOIN entities e ON e.id = mem.entity_id WHERE mem.memory_id IN ({marks})", chunk
        ):
            found.setdefault(row[0], []).append((row[1], row[2]))
    return found


def mention_percentile(conn: Connection, fraction: float) -> int | None:
    """The entity mention count at `fraction` (e.g. 0.9 → P90) over entities with mentions."""
    total = conn.execute("SELECT COUNT(*) FROM entities WHERE mentions > 0").fetchone()[0]
    if total == 0:
        return None
    offset = min(total - 1, int(fraction * (total - 1)))
    row = conn.execute(
        "SELECT mentions FROM entities WHERE mentions > 0 ORDER BY mentions LIMIT 1 OFFSET ?", (offset,)
    ).fetchone()
    return int(row[0])


def aspects_for_memories(conn: Connection, memory_ids: list[str]) -> dict[str, int]:
    """aspect_id → number of the given memories with an attribute in that aspect."""
    counts: dict[str, int] = {}
    for start in range(0, len(memory_ids), 500):
        chunk = memory_ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
            f"SELECT aspect_id, COUNT(DISTINCT memory_id) FROM entity_attributes"
            f" WHERE memory_id IN ({marks}) AND aspect_id IS NOT NULL GROUP BY aspect_id", chunk
        ):
            counts[row[0]] = row[1]
    return counts


def graph_stats(conn: Connection) -> dict[str, int]:
    row = conn.execute(
        "SELECT (SELECT COUNT(*) FROM entities), (SELECT COUNT(*) FROM relations),"
        " (SELECT COUNT(*) FROM memory_entity_mentions), (SELECT COUNT(*) FROM entity_aspects),"
        " (SELECT COUNT(*) FROM entity_attributes),"
        " (SELECT COUNT(*) FROM entity_attributes WHERE kind = 'constraint')"
    ).fetchone()
    keys = ("entities", "relations", "mentions", "aspects", "attributes", "constraints")
    return dict(zip(keys, (int(v) for v in row)))


def related_files_for_memories(conn: Connection, memory_ids: list[str]) -> dict[str, list[str]]:
    """memory_id → related_files for the given memories (empty lists omitted)."""
    found: dict[str, list[str]] = {}
    for start in range(0, len(memory_ids), 500):
        chunk = memory_ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
            f"SELECT m.id, j.value FROM memories m, json_each(m.related_files) j WHERE m.id IN ({marks})", chunk
        ):
            found.setdefault(row[0], []).append(str(row[1]))
    return found


def linked_memory_count(conn: Connection) -> int:
    """How many distinct memories have at least one entity mention."""
    return int(conn.execute("SELECT COUNT(DISTINCT memory_id) FROM memory_entity_mentions").fetchone()[0])


# -- aspect feedback bookkeeping (m018) -----------------------------------------------------

def sessions_awaiting_feedback(conn: Connection, limit: int = 20) -> list[str]:
    """Ended sessions whose FTS hits have not yet been fed back into aspect weights."""
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sessions'").fetchone()
    if not exists:
        return []
    return [r[0] for r in conn.execute(
        "SELECT s.session_key FROM sessions s WHERE s.ended_at IS NOT NULL AND NOT EXISTS"
        " (SELECT 1 FROM aspect_feedback_sessions f WHERE f.session_key = s.session_key)"
        " ORDER BY s.ended_at LIMIT ?", (limit,),
    )]


def fts_confirmed_memories(conn: Connection, session_key: str) -> list[str]:
    """Memories that received at least one FTS hit in the session."""
    return [r[0] for r in conn.execute(
        "SELECT DISTINCT memory_id FROM session_memories WHERE session_key = ? AND fts_hit_count > 0",
        (session_key,),
    )]


def mark_feedback_applied(conn: Connection, session_key: str, confirmations: int, aspects_updated: int) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO aspect_feedback_sessions(session_key, confirmations, aspects_updated, applied_at)"
        " VALUES (?, ?, ?, ?)", (session_key, confirmations, aspects_updated, now_iso()),
    )
