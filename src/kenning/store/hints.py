"""All SQL on prospective hints (memory_hints + memory_hints_fts).

Hints are hypothetical future queries a memory answers (memory-pipeline-v2 "Prospective
Indexing"). `search_hints` returns, per parent memory, the best (most negative) FTS5 bm25
rank so the recall BM25 leg can merge hint matches with content matches by max.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypedDict, cast

from kenning.core.clock import now_iso
from kenning.core.types import MemoryFilter
from kenning.store.backend import Connection, is_postgres
from kenning.store.memories import filter_sql

MAX_HINT_CHARS = 300


def add_hints(conn: Connection, memory_id: str, hints: Iterable[str], *, model: str | None = None) -> int:
    """Store hints for a memory (duplicates ignored). Returns how many were new."""
    stamp = now_iso()
    added = 0
    for hint in hints:
        text = " ".join(str(hint).split())[:MAX_HINT_CHARS]
        if not text:
            continue
        cur = conn.execute(
            "INSERT OR IGNORE INTO memory_hints(memory_id, hint, model, created_at) VALUES (?, ?, ?, ?)",
            (memory_id, text, model, stamp),
        )
        added += cur.rowcount
    return added


def hints_for(conn: Connection, memory_id: str) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT hint FROM memory_hints WHERE memory_id = ? ORDER BY rid", (memory_id,)
    )]


def has_hints(conn: Connection, memory_id: str) -> bool:
    return conn.execute("SELECT 1 FROM memory_hints WHERE memory_id = ? LIMIT 1", (memory_id,)).fetchone() is not None


def search_hints(conn: Connection, fts_query: str, *, limit: int = 100,
                 filters: MemoryFilter | None = None) -> list[tuple[str, float]]:
    """(memory_id, bm25) for live memories whose hints match `fts_query` (an FTS5 MATCH
    expression), best first; bm25 is FTS5's rank (more negative is better)."""
    if not fts_query.strip():
        return []
    where, params = filter_sql(filters, "m")
    if is_postgres(conn):
        from kenning.store.pg import search as pg
        from kenning.store.pg.narrow import as_pg

        hits = pg.bm25(as_pg(conn), "memory_hints_fts", re.findall(r'"([^"]+)"', fts_query), limit * 4)
        if not hits:
            return []
        score = {rid: -value for rid, value in hits}  # FTS5's sign: more negative is better
        marks = ",".join("?" * len(score))
        rows = conn.execute(
            f"SELECT h.rid, h.memory_id FROM memory_hints h JOIN memories m ON m.id = h.memory_id"
            f" WHERE h.rid IN ({marks}) AND {where}", [*score, *params]).fetchall()
        best: dict[str, float] = {}
        for rid, memory_id in rows:
            best[memory_id] = min(best.get(memory_id, score[rid]), score[rid])
        return sorted(best.items(), key=lambda item: item[1])[:limit]
    rows = conn.execute(
        "WITH hits AS (SELECT rowid AS rid, bm25(memory_hints_fts) AS score FROM memory_hints_fts"
        "  WHERE memory_hints_fts MATCH ? ORDER BY score LIMIT ?)"
        " SELECT h.memory_id, MIN(hits.score) AS score FROM hits JOIN memory_hints h ON h.rid = hits.rid"
        f" JOIN memories m ON m.id = h.memory_id WHERE {where} GROUP BY h.memory_id ORDER BY score LIMIT ?",
        [fts_query, limit * 4] + params + [limit],
    ).fetchall()
    return [(r[0], float(r[1])) for r in rows]


class HintBacklogItem(TypedDict):
    id: str
    content: str
    type: str


def memories_without_hints(conn: Connection, limit: int = 50) -> list[HintBacklogItem]:
    """Live memories that have no hints yet, newest first (the hints worker's backlog)."""
    rows = conn.execute(
        "SELECT m.id, m.content, m.type FROM memories m WHERE m.is_deleted = 0 AND m.superseded_by IS NULL"
        " AND m.type != 'document_chunk'"
        " AND NOT EXISTS (SELECT 1 FROM memory_hints h WHERE h.memory_id = m.id)"
        " ORDER BY m.created_at DESC LIMIT ?", (limit,),
    ).fetchall()
    return [cast(HintBacklogItem, dict(r)) for r in rows]


def hint_count(conn: Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM memory_hints").fetchone()[0])
