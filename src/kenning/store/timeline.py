"""Rows the timeline joins for one session key or one memory id (read-only, schema-tolerant).

Each function returns a table's raw rows (JSON columns still text) with a `created_at`-like stamp,
typed by the table's columns; the diagnostics timeline turns them into events. Tables from other
capabilities are optional.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict, cast

from kenning.store.backend import Connection, SqlValue, TableRow
from kenning.store.diagnostics import table_columns, table_exists
from kenning.store.predictor import TrainingLogRow
from kenning.store.sessions import SessionMemoryRecord


class HistoryRow(TypedDict):
    """A memory_history row; `memory_content` when read for a session (the memory's content)."""

    id: int
    memory_id: str
    event: str
    old_content: str | None
    new_content: str | None
    changes: str  # JSON text
    actor: str | None
    reason: str | None
    created_at: str
    memory_content: NotRequired[str]


class SessionRecord(TypedDict):
    """A sessions row as stored (`metadata` JSON text)."""

    session_key: str
    harness: str | None
    project: str | None
    cwd: str | None
    started_at: str
    ended_at: str | None
    prompt_count: int
    last_checkpoint_at: str | None
    status: str
    context: str | None
    status_line: str | None
    last_prompt_at: str | None
    prompts_since_checkpoint: int
    metadata: str
    transcript_path: str | None
    owner: str | None


class ScoreRecord(TypedDict):
    """A session_scores row (`missing_topics` JSON text)."""

    session_key: str
    project: str | None
    score: float
    confidence: float
    memories_recalled: int
    memories_used: int
    novel_context_count: int
    missing_topics: str
    continuity_reasoning: str | None
    judge: str
    created_at: str


class JobRecord(TypedDict):
    """A memory_jobs row, and the table it came from."""

    id: int
    job_type: str
    memory_id: str | None
    document_id: str | None
    dedup_key: str | None
    payload: str
    status: str
    priority: int
    attempts: int
    max_attempts: int
    run_after: str
    leased_at: str | None
    leased_by: str | None
    last_error: str | None
    result: str | None
    created_at: str
    updated_at: str
    completed_at: str | None
    failed_at: str | None
    table: str


class ComparisonRecord(TypedDict):
    """A predictor_comparisons row (id lists and relevance scores JSON text)."""

    id: str
    session_key: str
    predictor_ndcg: float
    baseline_ndcg: float
    predictor_won: int
    margin: float
    scorer_confidence: float
    ema_updated: int
    success_rate: float
    alpha: float
    predictor_top_ids: str
    baseline_top_ids: str
    relevance_scores: str
    fts_overlap_score: float | None
    created_at: str


class CheckpointBrief(TypedDict):
    """A scratchpad checkpoint of a session, without its content."""

    id: int
    trigger: str
    chars: int
    created_at: str


class MentionedEntity(TypedDict):
    """An entity a memory mentions, and how the memory mentions it."""

    id: str
    name: str
    entity_type: str
    mentions: int
    mention_text: str
    confidence: float
    source: str


def _rows(conn: Connection, sql: str, params: tuple[SqlValue, ...]) -> list[TableRow]:
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


def memory_history(conn: Connection, memory_id: str) -> list[HistoryRow]:
    return cast("list[HistoryRow]", _rows(conn, "SELECT * FROM memory_history WHERE memory_id = ? ORDER BY id", (memory_id,)))


def session_history(conn: Connection, key: str) -> list[HistoryRow]:
    """History of memories written by this session."""
    return cast("list[HistoryRow]", _rows(
        conn,
        "SELECT h.*, m.content AS memory_content FROM memory_history h JOIN memories m ON m.id = h.memory_id"
        " WHERE m.session_key = ? ORDER BY h.id",
        (key,),
    ))


def session_row(conn: Connection, key: str) -> SessionRecord | None:
    if not table_exists(conn, "sessions"):
        return None
    row = conn.execute("SELECT * FROM sessions WHERE session_key = ?", (key,)).fetchone()
    return cast(SessionRecord, dict(row)) if row else None


def session_checkpoints(conn: Connection, key: str) -> list[CheckpointBrief]:
    if not table_exists(conn, "session_checkpoints"):
        return []
    rows = conn.execute(
        "SELECT id, trigger, length(content) AS chars, created_at FROM session_checkpoints"
        " WHERE session_key = ? ORDER BY created_at", (key,),
    )
    return [CheckpointBrief(id=r["id"], trigger=r["trigger"], chars=r["chars"], created_at=r["created_at"]) for r in rows]


def session_candidates(conn: Connection, key: str) -> list[SessionMemoryRecord]:
    if not table_exists(conn, "session_memories"):
        return []
    return cast("list[SessionMemoryRecord]", _rows(conn, "SELECT * FROM session_memories WHERE session_key = ? ORDER BY rank", (key,)))


def memory_sessions(conn: Connection, memory_id: str) -> list[SessionMemoryRecord]:
    if not table_exists(conn, "session_memories"):
        return []
    return cast("list[SessionMemoryRecord]", _rows(
        conn, "SELECT * FROM session_memories WHERE memory_id = ? ORDER BY created_at", (memory_id,)))


def session_score(conn: Connection, key: str) -> ScoreRecord | None:
    if not table_exists(conn, "session_scores"):
        return None
    row = conn.execute("SELECT * FROM session_scores WHERE session_key = ?", (key,)).fetchone()
    return cast(ScoreRecord, dict(row)) if row else None


def jobs_for(conn: Connection, ident: str) -> list[JobRecord]:
    """memory_jobs (the one job queue, session summaries included) that name `ident`: its memory,
    its dedup key (a session's summary job) or inside the payload."""
    return [cast(JobRecord, r | {"table": "memory_jobs"}) for r in _rows(
        conn, "SELECT * FROM memory_jobs WHERE memory_id = ? OR dedup_key = ? OR payload LIKE ? ORDER BY id",
        (ident, ident, f"%{ident}%"))]


def comparisons_for(conn: Connection, key: str) -> list[ComparisonRecord]:
    if "session_key" not in table_columns(conn, "predictor_comparisons"):
        return []
    return cast("list[ComparisonRecord]", _rows(conn, "SELECT * FROM predictor_comparisons WHERE session_key = ?", (key,)))


def trainings_between(conn: Connection, key: str, start: str | None, end: str | None) -> list[TrainingLogRow]:
    cols = table_columns(conn, "predictor_training_log")
    if not cols:
        return []
    stamp = "created_at" if "created_at" in cols else None
    for col in ("session_key", "trigger_session_key", "triggered_by"):
        if col in cols:
            rows = _rows(conn, f"SELECT * FROM predictor_training_log WHERE {col} = ?", (key,))
            if rows:
                return cast("list[TrainingLogRow]", rows)
    if not (stamp and start):
        return []
    return cast("list[TrainingLogRow]", _rows(
        conn, f"SELECT * FROM predictor_training_log WHERE {stamp} >= ? AND {stamp} <= ?",
        (start, end or "9999"),
    ))


def memory_entities(conn: Connection, memory_id: str) -> list[MentionedEntity]:
    """Entities a memory mentions (for its provenance), most-mentioned first."""
    if not table_exists(conn, "memory_entity_mentions"):
        return []
    rows = conn.execute(
        "SELECT e.id, e.name, e.entity_type, e.mentions, mem.mention_text, mem.confidence, mem.source"
        " FROM memory_entity_mentions mem JOIN entities e ON e.id = mem.entity_id"
        " WHERE mem.memory_id = ? ORDER BY e.mentions DESC, e.name",
        (memory_id,),
    )
    return [MentionedEntity(id=r["id"], name=r["name"], entity_type=r["entity_type"], mentions=r["mentions"],
                            mention_text=r["mention_text"], confidence=r["confidence"], source=r["source"])
            for r in rows]
