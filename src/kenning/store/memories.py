"""All SQL on the memories table and its audit trail (memory_history).

Functions take a connection: a write connection from `db.with_write_tx()` for changes,
any reader for queries. Every change writes a memory_history row in the same transaction.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import TypedDict, cast

from kenning.core.clock import normalize_iso, now_iso
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.text import normalize_content
from kenning.core.types import Memory, MemoryDraft, MemoryFilter, Viewer
from kenning.store.backend import Connection, Row

_JSON_LIST_FIELDS = ("tags", "related_files", "related_modules", "derived_from")
_BOOL_FIELDS = ("pinned", "needs_review", "user_verified", "is_deleted")
EDITABLE_FIELDS = frozenset(
    {
        "content", "type", "importance", "confidence", "tags", "project", "scope", "source",
        "related_files", "related_modules", "pinned", "needs_review", "user_verified",
        "decay_half_life_days", "superseded_by", "valid_until", "extraction_model", "metadata",
        "applies", "area", "stale_at",
    }
)


def new_memory_id() -> str:
    return uuid.uuid4().hex[:16]


def row_to_memory(row: Row | Mapping[str, object]) -> Memory:
    data = dict(row)
    data.pop("rid", None)
    for name in _JSON_LIST_FIELDS:
        data[name] = json.loads(data[name] or "[]")
    data["metadata"] = json.loads(data.get("metadata") or "{}")
    for name in _BOOL_FIELDS:
        data[name] = bool(data[name])
    return Memory(**data)


def add_history(
    conn: Connection, memory_id: str, event: str, *, old_content: str | None = None,
    new_content: str | None = None, changes: Mapping[str, object] | None = None,
    actor: str | None = None, reason: str | None = None, at: str | None = None,
) -> None:
    conn.execute(
        "INSERT INTO memory_history(memory_id, event, old_content, new_content, changes, actor, reason, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (memory_id, event, old_content, new_content, json.dumps(changes or {}, default=str),
         actor, reason, at or now_iso()),
    )


def visibility_sql(viewer: Viewer | None, alias: str = "m") -> tuple[str, list[object]]:
    """What `viewer` may see (scopes personal | project | team | org): their own memories, org
    memories, and the non-personal memories of their team or of no team. None / sees_all: all."""
    if viewer is None or viewer.sees_all:
        return "1 = 1", []
    return (f"({alias}.author = ? OR {alias}.scope = 'org' OR ({alias}.scope != 'personal'"
            f" AND ({alias}.team IS NULL OR {alias}.team = ?)))", [viewer.user, viewer.team])


def find_duplicate(conn: Connection, content_hash: str, project: str | None, writer: Viewer | None = None) -> str | None:
    """A live memory with this content in this project that `writer` can see (None: any)."""
    visible, params = visibility_sql(writer)
    row = conn.execute(
        f"SELECT id FROM memories m WHERE content_hash = ? AND project IS ? AND is_deleted = 0 AND {visible} LIMIT 1",
        (content_hash, project, *params),
    ).fetchone()
    return row[0] if row else None


def check_visible(conn: Connection, memory_id: str, viewer: Viewer | None) -> Memory:
    """The memory, or NotFound when it does not exist or `viewer` may not see it (same answer)."""
    visible, params = visibility_sql(viewer)
    row = conn.execute(f"SELECT * FROM memories m WHERE id = ? AND {visible}", (memory_id, *params)).fetchone()
    if row is None:
        raise NotFound(f"no memory with id {memory_id!r}")
    return row_to_memory(row)


def insert_memory(
    conn: Connection, draft: MemoryDraft, *, embedding_model: str | None = None, actor: str | None = None
) -> tuple[str, bool]:
    """Insert (or find the exact duplicate of) a memory. Returns (id, deduped)."""
    content = normalize_content(draft.content)
    if not content.storage:
        raise InvalidInput("content is empty")
    if draft.id and conn.execute("SELECT 1 FROM memories WHERE id = ?", (draft.id,)).fetchone():
        visible, params = visibility_sql(draft.writer)
        if not conn.execute(f"SELECT 1 FROM memories m WHERE id = ? AND {visible}", (draft.id, *params)).fetchone():
            raise Conflict(f"id {draft.id!r} is taken; import without it")
        return draft.id, True
    existing = find_duplicate(conn, content.content_hash, draft.project, draft.writer)
    if existing:
        return existing, True
    memory_id = draft.id or new_memory_id()
    created = normalize_iso(draft.created_at) if draft.created_at else now_iso()
    writer = draft.writer
    conn.execute(
        "INSERT INTO memories(id, content, normalized_content, content_hash, type, importance, confidence,"
        " tags, project, scope, source, related_files, related_modules, pinned, needs_review, created_at, updated_at,"
        " embedding_model, session_key, metadata, derived_from, author, team, applies, area)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            memory_id, content.storage, content.normalized, content.content_hash, draft.type,
            draft.importance, draft.confidence, json.dumps(draft.tags), draft.project, draft.scope,
            draft.source, json.dumps(draft.related_files), json.dumps(draft.related_modules),
            int(draft.pinned), int(draft.needs_review), created, created, embedding_model, draft.session_key,
            json.dumps(draft.metadata), json.dumps(draft.derived_from),
            writer.user if writer else None, writer.team if writer else None, draft.applies, draft.area,
        ),
    )
    add_history(conn, memory_id, "created", new_content=content.storage, actor=actor or draft.source, at=created)
    return memory_id, False


def get_memory(conn: Connection, memory_id: str) -> Memory:
    row = conn.execute("SELECT * FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if row is None:
        raise NotFound(f"no memory with id {memory_id!r}")
    return row_to_memory(row)


def is_newer(conn: Connection, memory_id: str, than_id: str) -> bool:
    """True when `memory_id` was recorded after `than_id` (by created_at, then insertion order)."""
    rows = {r[0]: (r[1], r[2]) for r in conn.execute(
        "SELECT id, created_at, rid FROM memories WHERE id IN (?, ?)", (memory_id, than_id)).fetchall()}
    return memory_id in rows and than_id in rows and rows[memory_id] > rows[than_id]


def get_memories(conn: Connection, ids: list[str]) -> dict[str, Memory]:
    found: dict[str, Memory] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT * FROM memories WHERE id IN ({marks})", chunk):
            memory = row_to_memory(row)
            found[memory.id] = memory
    return found


def _encode(field: str, value: object) -> object:
    if field in _JSON_LIST_FIELDS or field == "metadata":
        return json.dumps(value)
    if field in _BOOL_FIELDS:
        return int(bool(value))
    return value


def update_memory(
    conn: Connection, memory_id: str, changes: Mapping[str, object], *, actor: str | None = None,
    reason: str | None = None, event: str = "updated",
) -> Memory:
    """Apply `changes` (EDITABLE_FIELDS only) and record what changed."""
    unknown = set(changes) - EDITABLE_FIELDS
    if unknown:
        raise InvalidInput(f"cannot edit field(s): {', '.join(sorted(unknown))}")
    before = get_memory(conn, memory_id)
    values = dict(changes)
    new_content: str | None = None
    if "content" in values:
        if not isinstance(values["content"], str):
            raise InvalidInput("content must be a string")
        content = normalize_content(values["content"])
        new_content = content.storage
        if not content.storage:
            raise InvalidInput("content is empty")
        values["content"] = content.storage
        values["normalized_content"] = content.normalized
        values["content_hash"] = content.content_hash
    diff = {k: [getattr(before, k, None), v] for k, v in values.items()
            if k in EDITABLE_FIELDS and getattr(before, k, None) != v}
    if not diff:
        return before
    values["updated_at"] = now_iso()
    assignments = ", ".join(f"{k} = ?" for k in values)
    conn.execute(
        f"UPDATE memories SET {assignments} WHERE id = ?",
        [_encode(k, v) for k, v in values.items()] + [memory_id],
    )
    add_history(
        conn, memory_id, event,
        old_content=before.content if "content" in diff else None,
        new_content=new_content if "content" in diff else None,
        changes={k: v for k, v in diff.items() if k != "content"}, actor=actor, reason=reason,
    )
    return get_memory(conn, memory_id)


def soft_delete(conn: Connection, memory_id: str, *, actor: str | None = None, reason: str | None = None) -> Memory:
    memory = get_memory(conn, memory_id)
    if memory.is_deleted:
        return memory
    at = now_iso()
    conn.execute("UPDATE memories SET is_deleted = 1, deleted_at = ?, updated_at = ? WHERE id = ?",
                 (at, at, memory_id))
    add_history(conn, memory_id, "deleted", actor=actor, reason=reason, at=at)
    return get_memory(conn, memory_id)


def recover_memory(conn: Connection, memory_id: str, *, actor: str | None = None) -> Memory:
    memory = get_memory(conn, memory_id)
    if not memory.is_deleted:
        return memory
    duplicate = find_duplicate(conn, memory.content_hash, memory.project)
    if duplicate:
        raise Conflict(f"cannot recover: memory {duplicate} holds the same content now")
    conn.execute("UPDATE memories SET is_deleted = 0, deleted_at = NULL, updated_at = ? WHERE id = ?",
                 (now_iso(), memory_id))
    add_history(conn, memory_id, "recovered", actor=actor)
    return get_memory(conn, memory_id)


def scrub_history(conn: Connection, memory_id: str, content: str | None = None) -> int:
    """Blank the content of `memory_id`'s history rows (and of any other row quoting `content`)."""
    blank = "UPDATE memory_history SET old_content = NULL, new_content = NULL, changes = '{}'"
    count = conn.execute(f"{blank} WHERE memory_id = ?", (memory_id,)).rowcount
    if content:
        quoted = json.dumps(content)[1:-1]  # as it appears inside the JSON `changes` column
        count += conn.execute(
            f"{blank} WHERE memory_id != ? AND (instr(old_content, ?) > 0 OR instr(new_content, ?) > 0"
            " OR instr(changes, ?) > 0)", (memory_id, content, content, quoted),
        ).rowcount
    return count


def purge_memory(conn: Connection, memory_id: str, *, actor: str | None = None, reason: str | None = None) -> None:
    """Hard delete: the row and its FTS entry go; earlier history rows lose their content and a
    'purged' row without content is added (store.purge removes the rest: graph, vectors, jobs)."""
    memory = get_memory(conn, memory_id)
    conn.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
    scrub_history(conn, memory_id, memory.content)
    add_history(conn, memory_id, "purged", actor=actor, reason=reason)


class HistoryEntry(TypedDict):
    """One memory_history row (`changes` decoded)."""

    id: int
    memory_id: str
    event: str
    old_content: str | None
    new_content: str | None
    changes: dict[str, object]
    actor: str | None
    reason: str | None
    created_at: str


def history(conn: Connection, memory_id: str) -> list[HistoryEntry]:
    rows = conn.execute(
        "SELECT * FROM memory_history WHERE memory_id = ? ORDER BY id", (memory_id,)
    ).fetchall()
    return [cast(HistoryEntry, dict(r, changes=json.loads(r["changes"]))) for r in rows]


def filter_sql(filters: MemoryFilter | None, alias: str = "m") -> tuple[str, list[object]]:
    """SQL conditions (joined by AND) and parameters for a MemoryFilter."""
    f = filters or MemoryFilter()
    clauses: list[str] = []
    params: list[object] = []
    if not f.include_deleted:
        clauses.append(f"{alias}.is_deleted = 0")
    if not f.include_superseded:
        clauses.append(f"{alias}.superseded_by IS NULL")
    if f.project is not None:
        clauses.append(f"({alias}.project = ? OR {alias}.project IS NULL)" if f.include_global
                       else f"{alias}.project = ?")
        params.append(f.project)
    if f.session_key is not None:
        clauses.append(f"{alias}.session_key = ?")
        params.append(f.session_key)
    if f.scope is not None:
        clauses.append(f"{alias}.scope = ?")
        params.append(f.scope)
    if f.viewer is not None and not f.viewer.sees_all:
        visible, visible_params = visibility_sql(f.viewer, alias)
        clauses.append(visible)
        params.extend(visible_params)
    if f.types:
        clauses.append(f"{alias}.type IN ({','.join('?' * len(f.types))})")
        params.extend(f.types)
    for tag in f.tags or []:
        clauses.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE json_each.value = ?)")
        params.append(tag)
    if f.since:
        clauses.append(f"{alias}.created_at >= ?")
        params.append(normalize_iso(f.since))
    if f.until:
        clauses.append(f"{alias}.created_at <= ?")
        params.append(normalize_iso(f.until))
    return (" AND ".join(clauses) or "1 = 1"), params


def list_memories(
    conn: Connection, filters: MemoryFilter | None = None, *, limit: int = 50, offset: int = 0,
    order: str = "created_at DESC",
) -> tuple[list[Memory], int]:
    where, params = filter_sql(filters)
    total = conn.execute(f"SELECT COUNT(*) FROM memories m WHERE {where}", params).fetchone()[0]
    rows = conn.execute(
        f"SELECT * FROM memories m WHERE {where} ORDER BY m.{order}, m.rid DESC LIMIT ? OFFSET ?",
        params + [limit, offset],
    ).fetchall()
    return [row_to_memory(r) for r in rows], total


def set_embedding_model(conn: Connection, memory_id: str, model: str) -> None:
    """Record which embedding model the memory's stored vector came from."""
    conn.execute("UPDATE memories SET embedding_model = ? WHERE id = ?", (model, memory_id))


def content_hash(conn: Connection, memory_id: str) -> str:
    row = conn.execute("SELECT content_hash FROM memories WHERE id = ?", (memory_id,)).fetchone()
    if row is None:
        raise NotFound(f"memory {memory_id} not found")
    return str(row[0])


def importance_by_id(conn: Connection, ids: list[str]) -> dict[str, float]:
    """id → importance for the given ids (unknown ids are absent)."""
    found: dict[str, float] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        found.update({r[0]: r[1] for r in conn.execute(
            f"SELECT id, importance FROM memories WHERE id IN ({','.join('?' * len(chunk))})", chunk)})
    return found


def session_neighbours(conn: Connection, hit_ids: list[str], window: int, filters: MemoryFilter | None
                       ) -> dict[str, list[tuple[str, int]]]:
    """For each hit with a session: [(neighbour id, distance)] within `window` places either side.

    One query: number the memories of the hits' sessions that match `filters` in recording order,
    then pair each hit with the memories at most `window` positions away. Episodes (type
    `episode`) are left out on both sides (see retrieval.session_context for why).
    """
    if not hit_ids:
        return {}
    where, params = filter_sql(filters)
    marks = ",".join("?" * len(hit_ids))
    rows = conn.execute(
        "WITH placed AS (SELECT m.id, m.session_key,"
        "  ROW_NUMBER() OVER (PARTITION BY m.session_key ORDER BY m.rid) AS pos FROM memories m"
        f"  WHERE m.session_key IN (SELECT session_key FROM memories WHERE id IN ({marks}))"
        f"  AND m.type != 'episode' AND {where})"
        " SELECT a.id, n.id, ABS(n.pos - a.pos) FROM placed a JOIN placed n"
        "  ON n.session_key = a.session_key AND n.pos BETWEEN a.pos - ? AND a.pos + ? AND n.pos != a.pos"
        f" WHERE a.id IN ({marks})",
        [*hit_ids, *params, window, window, *hit_ids],
    ).fetchall()
    found: dict[str, list[tuple[str, int]]] = {}
    for anchor, neighbour, distance in rows:
        found.setdefault(anchor, []).append((neighbour, distance))
    return found


def provenance_rows(conn: Connection, ids: list[str], filters: MemoryFilter | None = None
                    ) -> dict[str, tuple[list[str], list[str]]]:
    """id → (derived_from, metadata.amended_by as a list) for the given ids (those matching
    `filters` when given; any state when not)."""
    where, params = filter_sql(filters) if filters is not None else ("1 = 1", [])
    found: dict[str, tuple[list[str], list[str]]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        rows = conn.execute(
            f"SELECT m.id, m.derived_from, json_extract(m.metadata, '$.amended_by') FROM memories m"
            f" WHERE m.id IN ({','.join('?' * len(chunk))}) AND {where}", [*chunk, *params],
        ).fetchall()
        for row in rows:
            amended = row[2] or "[]"  # a list of ids (one id: a store written before the list)
            found[row[0]] = (_id_list(row[1]), _id_list(amended) if amended.startswith("[") else [amended])
    return found


def _id_list(text: str | None) -> list[str]:
    """A JSON list of ids; most memories have none (NULL or '[]'), read without the JSON parser:
    recall's provenance stage asks for 100 memories' two lists on every query (issue 36)."""
    if not text or text == "[]":
        return []
    ids: list[str] = json.loads(text)
    return ids


def live_successors(conn: Connection, ids: list[str], max_hops: int = 8) -> dict[str, str]:
    """id → the live memory at the end of its `superseded_by` chain (itself when live); ids whose
    chain ends in a deleted memory (or runs past `max_hops`) are left out."""
    found: dict[str, str] = {}
    current = {i: i for i in ids}
    for _ in range(max_hops):
        if not current:
            break
        targets = sorted(set(current.values()))
        rows = {r[0]: (r[1], r[2]) for start in range(0, len(targets), 500) for r in conn.execute(
            f"SELECT id, superseded_by, is_deleted FROM memories WHERE id IN ({','.join('?' * len(targets[start:start + 500]))})",
            targets[start:start + 500])}
        following: dict[str, str] = {}
        for origin, at in current.items():
            successor, deleted = rows.get(at, (None, 1))
            if deleted:
                continue
            if successor is None:
                found[origin] = at
            else:
                following[origin] = successor
        current = following
    return found


def record_access(conn: Connection, ids: list[str], at: str | None = None) -> None:
    stamp = at or now_iso()
    conn.executemany(
        "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? WHERE id = ?",
        [(stamp, i) for i in ids],
    )


class MemoryStats(TypedDict):
    total: int
    live: int
    deleted: int
    superseded: int
    pinned: int
    by_type: dict[str, int]
    by_project: dict[str, int]


def stats(conn: Connection) -> MemoryStats:
    row = conn.execute(
        "SELECT COUNT(*) AS total, SUM(is_deleted = 0) AS live, SUM(is_deleted) AS deleted,"
        " SUM(superseded_by IS NOT NULL AND is_deleted = 0) AS superseded, SUM(pinned) AS pinned"
        " FROM memories"
    ).fetchone()
    by_type: dict[str, int] = {r[0]: r[1] for r in conn.execute(
        "SELECT type, COUNT(*) FROM memories WHERE is_deleted = 0 GROUP BY type ORDER BY 2 DESC"
    ).fetchall()}
    by_project: dict[str, int] = {r[0]: r[1] for r in conn.execute(
        "SELECT COALESCE(project, ''), COUNT(*) FROM memories WHERE is_deleted = 0 GROUP BY 1 ORDER BY 2 DESC"
    ).fetchall()}
    return {
        "total": row["total"] or 0, "live": row["live"] or 0, "deleted": row["deleted"] or 0,
        "superseded": row["superseded"] or 0, "pinned": row["pinned"] or 0,
        "by_type": by_type, "by_project": by_project,
    }
