"""Rows the timeline joins for one session key or one memory id (read-only, schema-tolerant).

Each function returns plain dicts with a `created_at`-like stamp; the diagnostics timeline
turns them into events. Tables from other capabilities are optional.
"""

from __future__ import annotations

from typing import Any

from kenning.store.backend import Connection
from kenning.store.diagnostics import table_columns, table_exists


def _rows(conn: Connection, sql: str, params: tuple) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(sql, params)]


def memory_exists(conn: Connection, memory_id: str) -> bool:
    return conn.execute("SELECT 1 FROM memories WHERE id = ?", (memory_id,)).fetchone() is not None


def session_exists(conn: Connection, key: str) -> bool:
    for table in ("sessions", "session_memories", "session_scores"):
        if table_exists(conn, table) and conn.execute(
            f"SELECT 1 FROM {table} WHERE session_key = ? LIMIT 1", (key,)
        ).fetchone():
            return True
    return conn.execute(  # a session known only by its summary job
        "SELECT 1 FROM memory_jobs WHERE job_type = 'session_summary' AND dedup_key = ? LIMIT 1", (key,)
    ).fetchone() is not None


def memory_history(conn: Connection, memory_id: str) -> list[dict[str, Any]]:
    return _rows(conn, "SELECT * FROM memory_history WHERE memory_id = ? ORDER BY id", (memory_id,))


def session_history(conn: Connection, key: str) -> list[dict[str, Any]]:
    """History of memories written by this session."""
    return _rows(
        conn,
        "SELECT h.*, m.content AS memory_content FROM memory_history h JOIN memories m ON m.id = h.memory_id"
        " WHERE m.session_key = ? ORDER BY h.id",
        (key,),
    )


def session_row(conn: Connection, key: str) -> dict[str, Any] | None:
    if not table_exists(conn, "sessions"):
        return None
    row = conn.execute("SELECT * FROM sessions WHERE session_key = ?", (key,)).fetchone()
    return dict(row) if row else None


def session_checkpoints(conn: Connection, key: str) -> list[dict[str, Any]]:
    if not table_exists(conn, "session_checkpoints"):
        return []
    return _rows(
        conn, "SELECT id, trigger, length(content) AS chars, created_at FROM session_checkpoints"
        " WHERE session_key = ? ORDER BY created_at", (key,),
    )


def session_candidates(conn: Connection, key: str) -> list[dict[str, Any]]:
    if not table_exists(conn, "session_memories"):
        return []
    return _rows(conn, "SELECT * FROM session_memories WHERE session_key = ? ORDER BY rank", (key,))


def memory_sessions(conn: Connection, memory_id: str) -> list[dict[str, Any]]:
    if not table_exists(conn, "session_memories"):
        return []
    return _rows(conn, "SELECT * FROM session_memories WHERE memory_id = ? ORDER BY created_at", (memory_id,))


def session_score(conn: Connection, key: str) -> dict[str, Any] | None:
    if not table_exists(conn, "session_scores"):
        return None
    row = conn.execute("SELECT * FROM session_scores WHERE session_key = ?", (key,)).fetchone()
    return dict(row) if row else None


def jobs_for(conn: Connection, ident: str) -> list[dict[str, Any]]:
    """memory_jobs (the one job queue, session summaries included) that name `ident`: its memory,
    its dedup key (a session's summary job) or inside the payload."""
    return [r | {"table": "memory_jobs"} for r in _rows(
        conn, "SELECT * FROM memory_jobs WHERE memory_id = ? OR dedup_key = ? OR payload LIKE ? ORDER BY id",
        (ident, ident, f"%{ident}%"))]


def comparisons_for(conn: Connection, key: str) -> list[dict[str, Any]]:
    if "session_key" not in table_columns(conn, "predictor_comparisons"):
        return []
    return _rows(conn, "SELECT * FROM predictor_comparisons WHERE session_key = ?", (key,))


def trainings_between(conn: Connection, key: str, start: str | None, end: str | None) -> list[dict[str, Any]]:
    cols = table_columns(conn, "predictor_training_log")
    if not cols:
        return []
    stamp = "created_at" if "created_at" in cols else None
    for col in ("session_key", "trigger_session_key", "triggered_by"):
        if col in cols:
            rows = _rows(conn, f"SELECT * FROM predictor_training_log WHERE {col} = ?", (key,))
            if rows:
                return rows
    if not (stamp and start):
        return []
    return _rows(
        conn, f"SELECT * FROM predictor_training_log WHERE {stamp} >= ? AND {stamp} <= ?",
        (start, end or "9999"),
    )


def memory_entities(conn: Connection, memory_id: str) -> list[dict[str, Any]]:
    """Entities a memory mentions (for its provenance), most-mentioned first."""
    if not table_exists(conn, "memory_entity_mentions"):
        return []
    return _rows(
        conn,
        "SELECT e.id, e.name, e.entity_type, e.mentions, mem.mention_text, mem.confidence, mem.source"
        " FROM memory_entity_mentions mem JOIN entities e ON e.id = mem.entity_id"
        " WHERE mem.memory_id = ? ORDER BY e.mentions DESC, e.name",
        (memory_id,),
    )
