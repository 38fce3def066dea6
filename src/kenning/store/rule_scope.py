"""SQL for where a rule applies and for rules the code has left behind (issue 31).

- `set_code_area`: inside the write transaction that stores a rule naming indexed code (or that links the
  rules stored before the project was indexed: `rules_to_scope`), its area becomes the named symbol (or
  file) and the linked files join `related_files` (the step lookup keys on them);
- `linked_area_rules`: the live area rules linked to code in some files, with the link (path, symbol);
- `mark_stale`: `stale_at` and `metadata.stale` = {commit, path, symbol, reason}, each
  change with its memory_history row (store.memories.update_memory).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TypedDict

from kenning.core.claims import RULE_TYPES
from kenning.core.types import Memory
from kenning.store.backend import Connection
from kenning.store.memories import get_memory, row_to_memory, update_memory

AREA = "area"


def _marks(n: int) -> str:
    return ",".join("?" * n)


def set_code_area(conn: Connection, memory_id: str, area: str, related_files: Sequence[str]) -> None:
    """A new rule's area is the code it names (same transaction as its insert: no history row of its own)."""
    conn.execute("UPDATE memories SET applies = ?, area = ?, related_files = ? WHERE id = ?",
                 (AREA, area, json.dumps(list(related_files)), memory_id))


def scope_to_code(conn: Connection, memory_id: str, area: str, related_files: Sequence[str], *, actor: str) -> Memory:
    """A stored rule linked to code later (the project indexed after it): its area becomes that code (history row)."""
    return update_memory(conn, memory_id, {"applies": AREA, "area": area, "related_files": list(related_files)},
                         actor=actor, reason=f"names indexed code: area {area}")


def rules_to_scope(conn: Connection, memory_ids: Sequence[str]) -> list[Memory]:
    """The live rules among `memory_ids` that are not project-wide (their code links make them area rules)."""
    ids = list(dict.fromkeys(memory_ids))
    out: list[Memory] = []
    for start in range(0, len(ids), 400):
        chunk = ids[start:start + 400]
        rows = conn.execute(
            f"SELECT * FROM memories WHERE id IN ({_marks(len(chunk))}) AND is_deleted = 0"
            f" AND COALESCE(applies, '') != 'project' AND type IN ({_marks(len(RULE_TYPES))}) ORDER BY id",
            [*chunk, *RULE_TYPES]).fetchall()
        out += [row_to_memory(r) for r in rows]
    return out


class LinkedRule(TypedDict):
    memory_id: str
    path: str
    symbol: str


def linked_area_rules(conn: Connection, project: str, paths: Sequence[str]) -> list[LinkedRule]:
    """Live, not yet stale area rules linked to code in `paths` (file links and symbol links)."""
    out: list[LinkedRule] = []
    paths = list(dict.fromkeys(paths))
    for start in range(0, len(paths), 400):
        chunk = paths[start:start + 400]
        rows = conn.execute(
            "SELECT l.memory_id, l.path, l.symbol FROM code_memory_links l JOIN memories m ON m.id = l.memory_id"
            f" WHERE l.project = ? AND l.path IN ({_marks(len(chunk))}) AND m.is_deleted = 0"
            f" AND m.superseded_by IS NULL AND m.stale_at IS NULL AND m.applies = ?"
            f" AND m.type IN ({_marks(len(RULE_TYPES))}) ORDER BY l.memory_id, l.path, l.symbol",
            [project, *chunk, AREA, *RULE_TYPES],
        ).fetchall()
        out += [{"memory_id": r[0], "path": r[1], "symbol": r[2]} for r in rows]
    return out


def area_rules_on_file(conn: Connection, project: str | None, path: str) -> list[str]:
    """Live, not yet stale area rules of `project` keyed on the file `path` (related_files or a code link)."""
    rows = conn.execute(
        "SELECT DISTINCT m.id FROM memories m WHERE m.is_deleted = 0 AND m.superseded_by IS NULL"
        f" AND m.stale_at IS NULL AND m.applies = ? AND m.type IN ({_marks(len(RULE_TYPES))}) AND m.project IS ?"
        " AND (m.id IN (SELECT memory_id FROM memory_lookup WHERE key = ?)"
        " OR m.id IN (SELECT memory_id FROM code_memory_links WHERE path = ?)) ORDER BY m.id",
        [AREA, *RULE_TYPES, project, f"file:{path}", path]).fetchall()
    return [r[0] for r in rows]


def code_exists(conn: Connection, project: str, path: str, symbol: str) -> bool:
    """Is the file (and, for a symbol link, the definition in it) still in the code index?"""
    if not symbol:
        return conn.execute("SELECT 1 FROM code_files WHERE project = ? AND path = ?", (project, path)).fetchone() is not None
    return conn.execute(
        "SELECT 1 FROM code_nodes n JOIN code_files f ON f.id = n.file_id"
        " WHERE f.project = ? AND f.path = ? AND n.qualname = ? LIMIT 1", (project, path, symbol)).fetchone() is not None


def symbol_elsewhere(conn: Connection, project: str, symbol: str, not_path: str) -> str | None:
    """'path:qualname' of a definition with the same last name in another file (a move), or None."""
    name = symbol.rsplit(".", 1)[-1]
    row = conn.execute(
        "SELECT f.path, n.qualname FROM code_nodes n JOIN code_files f ON f.id = n.file_id"
        " WHERE f.project = ? AND n.name = ? AND f.path != ? ORDER BY f.path LIMIT 1", (project, name, not_path),
    ).fetchone()
    return f"{row[0]}:{row[1]}" if row else None


def mark_stale(conn: Connection, memory_id: str, *, at: str, stale: dict[str, object], actor: str) -> Memory:
    """Set stale_at and metadata.stale (history row); a rule already stale keeps its first evidence, and one
    the user confirmed in review after the same code went (its metadata.stale names it) stays confirmed."""
    memory = get_memory(conn, memory_id)
    prior = (memory.metadata or {}).get("stale")
    if memory.stale_at or (isinstance(prior, dict) and (prior.get("path"), prior.get("symbol"))
                           == (stale.get("path"), stale.get("symbol"))):
        return memory
    metadata = {**(memory.metadata or {}), "stale": stale}
    return update_memory(conn, memory_id, {"stale_at": at, "metadata": metadata}, actor=actor,
                         reason=f"its code was {stale.get('reason', 'removed')}: {stale.get('path', '')}"
                                f"{':' + str(stale['symbol']) if stale.get('symbol') else ''}")

