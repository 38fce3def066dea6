"""Read-only SQL behind diagnostics, doctor and the timeline.

Tables owned by other capabilities (memory_jobs, predictor_*, sessions) may not exist
in every database, so every query here checks the schema first and returns an empty
answer instead of failing: diagnostics must describe a broken store, not crash on it.
"""

from __future__ import annotations

import json
from typing import TypedDict, cast

from kenning.store.backend import Connection, is_postgres
from kenning.store.retention import count_stale_embeddings


class StorageStats(TypedDict):
    page_size: int
    page_count: int
    freelist_count: int
    journal_mode: str
    integrity: list[str]  # quick_check's lines ("ok" when sound)
    schema_version: int | None


class IndexStats(TypedDict, total=False):
    """Full-text and embedding coverage of the memories (None where a table is missing)."""

    live_memories: int
    total_memories: int
    fts_rows: int | None
    fts_missing: int
    fts_orphans: int
    embedding_model: str | None
    embeddings: int
    embedding_models: dict[str, int]
    embeddings_missing: int | None
    live_hashes: int


class DuplicateExample(TypedDict):
    content_hash: str
    ids: list[str]


class DuplicateStats(TypedDict):
    live_memories: int
    duplicate_groups: int
    duplicate_rows: int
    examples: list[DuplicateExample]


class MutationStats(TypedDict):
    events_24h: dict[str, int]
    dangling_supersessions: int
    memories_without_history: int


class JobTableStats(TypedDict, total=False):
    table: str
    by_status: dict[str, int]
    by_type: dict[str, dict[str, int]]
    oldest_pending_at: str | None
    expired_leases: int


class QueueStats(TypedDict):
    tables: dict[str, JobTableStats]


class JobOutcome(TypedDict):
    id: int
    kind: str | None
    produced: int | None


class JobError(TypedDict):
    id: int
    status: str
    kind: str
    error: str
    at: str
    table: str


class SessionStats(TypedDict):
    sessions: int
    last_started_at: str | None
    active: int
    scored: int


class SessionScoreBrief(TypedDict):
    session_key: str
    project: str | None
    score: float
    confidence: float
    judge: str
    created_at: str


class PredictorTableStats(TypedDict):
    comparisons: int
    trainings: int
    last_training: dict[str, object] | None  # the newest predictor_training_log row


def table_exists(conn: Connection, name: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?", (name,)
    ).fetchone()
    return row is not None


def table_columns(conn: Connection, name: str) -> set[str]:
    if not table_exists(conn, name):
        return set()
    if is_postgres(conn):
        return {r[0] for r in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
            " AND table_name = ?", (name,))}
    return {r[1] for r in conn.execute(f"PRAGMA table_info({name})")}


def _first_column(cols: set[str], *names: str) -> str | None:
    for name in names:
        if name in cols:
            return name
    return None


# -- storage ----------------------------------------------------------------------
def storage_stats(conn: Connection) -> StorageStats:
    if is_postgres(conn):
        return _postgres_storage_stats(conn)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    page_count = conn.execute("PRAGMA page_count").fetchone()[0]
    freelist = conn.execute("PRAGMA freelist_count").fetchone()[0]
    journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    quick = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
    version = None
    if table_exists(conn, "schema_migrations"):
        version = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0]
    return {
        "page_size": page_size,
        "page_count": page_count,
        "freelist_count": freelist,
        "journal_mode": journal,
        "integrity": quick,
        "schema_version": version,
    }


def _postgres_storage_stats(conn: Connection) -> StorageStats:
    """The server keeps its own write-ahead log and free space; the check here is the store's own
    invariant: the full-text side table holds one row per memory (its trigger kept up)."""
    size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    memories = conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    indexed = conn.execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0]
    version = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0]
    return {
        "page_size": 8192, "page_count": size // 8192, "freelist_count": 0, "journal_mode": "wal",
        "integrity": ["ok"] if memories == indexed else [f"{memories} memories but {indexed} full-text rows"],
        "schema_version": version,
    }


# -- index: FTS and embeddings in sync with memories --------------------------------
def index_stats(conn: Connection, embedding_model: str | None) -> IndexStats:
    live = conn.execute("SELECT COUNT(*) FROM memories WHERE is_deleted = 0").fetchone()[0]
    total = conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    out: IndexStats = {"live_memories": live, "total_memories": total}
    # the full-text side table's row per memory: FTS5's docsize (id) here, the tsvector table (rid) on Postgres
    fts_table, key = ("memories_fts", "rid") if is_postgres(conn) else ("memories_fts_docsize", "id")
    if table_exists(conn, fts_table) and is_postgres(conn):
        # one row per memory, written in the memory's own transaction (m008's commit-time trigger):
        # the two counts tell a gap. A missing row and an orphan would cancel out, which the
        # anti-joins below see, but they cost 1.5 s at a million memories at each daemon's start
        # and every maintenance cycle (issue 36)
        out["fts_rows"] = conn.execute(f"SELECT COUNT(*) FROM {fts_table}").fetchone()[0]
        out["fts_missing"] = max(0, total - out["fts_rows"])
        out["fts_orphans"] = max(0, out["fts_rows"] - total)
    elif table_exists(conn, fts_table):
        out["fts_rows"] = conn.execute(f"SELECT COUNT(*) FROM {fts_table}").fetchone()[0]
        out["fts_missing"] = conn.execute(
            f"SELECT COUNT(*) FROM memories m WHERE NOT EXISTS (SELECT 1 FROM {fts_table} d WHERE d.{key} = m.rid)"
        ).fetchone()[0]
        out["fts_orphans"] = conn.execute(
            f"SELECT COUNT(*) FROM {fts_table} d WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.rid = d.{key})"
        ).fetchone()[0]
    else:
        out["fts_rows"] = None
        out["fts_missing"] = total
        out["fts_orphans"] = 0
    out["embedding_model"] = embedding_model
    if table_exists(conn, "embeddings"):
        out["embeddings"] = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        out["embedding_models"] = {r[0]: r[1] for r in conn.execute(
            "SELECT model, COUNT(*) FROM embeddings GROUP BY model").fetchall()}
        if embedding_model and is_postgres(conn):  # the embedding tracker's own count, from m009's indexes:
            # the anti-join below took 2.3-5.9 s at a million memories (issue 36)
            out["embeddings_missing"] = count_stale_embeddings(conn, embedding_model)
        elif embedding_model:
            out["embeddings_missing"] = conn.execute(
                "SELECT COUNT(DISTINCT m.content_hash) FROM memories m"
                " LEFT JOIN embeddings e ON e.content_hash = m.content_hash AND e.model = ?"
                " WHERE m.is_deleted = 0 AND e.rid IS NULL",
                (embedding_model,),
            ).fetchone()[0]
        else:
            out["embeddings_missing"] = None
        out["live_hashes"] = conn.execute(
            "SELECT COUNT(DISTINCT content_hash) FROM memories WHERE is_deleted = 0"
        ).fetchone()[0]
    else:
        out["embeddings"], out["embedding_models"], out["embeddings_missing"], out["live_hashes"] = 0, {}, None, 0
    return out


# -- duplicates ----------------------------------------------------------------------
def duplicate_stats(conn: Connection, sample: int = 5) -> DuplicateStats:
    # portable SQL (PostgreSQL has no GROUP_CONCAT and no output alias in HAVING)
    groups = conn.execute(
        "SELECT content_hash, COALESCE(project, '') AS project, COUNT(*) AS n FROM memories WHERE is_deleted = 0"
        " GROUP BY content_hash, COALESCE(project, '') HAVING COUNT(*) > 1 ORDER BY n DESC, content_hash"
    ).fetchall()
    extra = sum(g["n"] - 1 for g in groups)
    live = conn.execute("SELECT COUNT(*) FROM memories WHERE is_deleted = 0").fetchone()[0]
    examples: list[DuplicateExample] = [{"content_hash": g["content_hash"], "ids": [r[0] for r in conn.execute(
        "SELECT id FROM memories WHERE is_deleted = 0 AND content_hash = ? AND COALESCE(project, '') = ?"
        " ORDER BY created_at, id", (g["content_hash"], g["project"])).fetchall()]} for g in groups[:sample]]
    return {"live_memories": live, "duplicate_groups": len(groups), "duplicate_rows": extra, "examples": examples}


# -- mutations: history audit and supersession integrity -----------------------------
def mutation_stats(conn: Connection, since: str) -> MutationStats:
    events: dict[str, int] = {r[0]: r[1] for r in conn.execute(
        "SELECT event, COUNT(*) FROM memory_history WHERE created_at >= ? GROUP BY event", (since,)
    ).fetchall()}
    dangling = conn.execute(
        "SELECT COUNT(*) FROM memories m WHERE m.superseded_by IS NOT NULL AND NOT EXISTS"
        " (SELECT 1 FROM memories s WHERE s.id = m.superseded_by)"
    ).fetchone()[0]
    no_history = conn.execute(
        "SELECT COUNT(*) FROM memories m WHERE NOT EXISTS"
        " (SELECT 1 FROM memory_history h WHERE h.memory_id = m.id)"
    ).fetchone()[0]
    return {"events_24h": events, "dangling_supersessions": dangling, "memories_without_history": no_history}


# -- queue: memory_jobs, the one job queue (pipeline jobs and session summaries) -------------
def _job_table_stats(conn: Connection, table: str, now: str, lease_cutoff: str | None) -> JobTableStats | None:
    cols = table_columns(conn, table)
    if not cols or "status" not in cols:
        return None
    by_status: dict[str, int] = {r[0]: r[1] for r in conn.execute(
        f"SELECT status, COUNT(*) FROM {table} GROUP BY status").fetchall()}
    out: JobTableStats = {"table": table, "by_status": by_status}
    if "job_type" in cols:
        by_type: dict[str, dict[str, int]] = {}
        for job_type, status, count in conn.execute(
                f"SELECT job_type, status, COUNT(*) FROM {table} GROUP BY job_type, status"):
            by_type.setdefault(job_type, {})[status] = count
        out["by_type"] = by_type
    created = _first_column(cols, "created_at", "enqueued_at")
    if created:
        out["oldest_pending_at"] = conn.execute(
            f"SELECT MIN({created}) FROM {table} WHERE status = 'pending'"
        ).fetchone()[0]
    until = _first_column(cols, "leased_until", "lease_expires_at")
    if until:
        out["expired_leases"] = conn.execute(
            f"SELECT COUNT(*) FROM {table} WHERE status IN ('leased', 'running') AND {until} < ?", (now,)
        ).fetchone()[0]
    elif "leased_at" in cols and lease_cutoff:
        out["expired_leases"] = conn.execute(
            f"SELECT COUNT(*) FROM {table} WHERE status = 'leased' AND leased_at < ?", (lease_cutoff,)
        ).fetchone()[0]
    return out


def queue_stats(conn: Connection, now: str, lease_cutoff: str | None = None) -> QueueStats:
    """The job table: counts by status (and by job type), oldest pending, leases older than `lease_cutoff`."""
    stats = _job_table_stats(conn, "memory_jobs", now, lease_cutoff)
    return {"tables": {"memory_jobs": stats} if stats is not None else {}}


def recent_job_outcomes(conn: Connection, limit: int) -> list[JobOutcome]:
    """The last `limit` finished extraction-like jobs with how much each produced.

    A job "produced" something when it left a result with facts/memories, or when
    memory_history rows name the job. Used to turn silent extraction failure red.
    """
    cols = table_columns(conn, "memory_jobs")
    if not cols or "status" not in cols:
        return []
    kind = _first_column(cols, "job_type", "kind", "type")
    result = _first_column(cols, "result", "output")
    finished = _first_column(cols, "completed_at", "updated_at", "created_at")
    where = "status IN ('completed', 'done', 'succeeded')"
    if kind:
        where += f" AND ({kind} LIKE '%extract%' OR {kind} LIKE '%summary%' OR {kind} LIKE '%remember%')"
    select = ", ".join(c for c in ("id", kind, result, finished) if c)
    rows = conn.execute(
        f"SELECT {select} FROM memory_jobs WHERE {where} ORDER BY {finished or 'id'} DESC LIMIT ?", (limit,)
    ).fetchall()
    out: list[JobOutcome] = []
    for row in rows:
        produced = None
        if result and row[result]:
            produced = _count_outputs(row[result])
        out.append({"id": row["id"], "kind": row[kind] if kind else None, "produced": produced})
    return out


def _count_outputs(raw: str) -> int | None:
    try:
        data = json.loads(raw)
    except (TypeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    total = None
    for key in ("facts", "added", "written", "proposals", "memories", "entities", "facts_extracted"):
        value = data.get(key)
        if isinstance(value, list):
            total = (total or 0) + len(value)
        elif isinstance(value, (int, float)):
            total = (total or 0) + int(value)
    return total


def job_errors(conn: Connection, limit: int = 20) -> list[JobError]:
    """The newest jobs (any type) that carry an error."""
    if not table_exists(conn, "memory_jobs"):
        return []
    return [cast(JobError, dict(r) | {"table": "memory_jobs"}) for r in conn.execute(
        "SELECT id, status, job_type AS kind, last_error AS error, updated_at AS at FROM memory_jobs"
        " WHERE last_error IS NOT NULL AND last_error != '' ORDER BY updated_at DESC LIMIT ?", (limit,),
    )]


# -- sessions / connectors -----------------------------------------------------------
def session_stats(conn: Connection) -> SessionStats:
    if not table_exists(conn, "sessions"):
        return {"sessions": 0, "last_started_at": None, "active": 0, "scored": 0}
    row = conn.execute(
        "SELECT COUNT(*) AS n, MAX(started_at) AS last, SUM(status = 'active') AS active FROM sessions"
    ).fetchone()
    scored = conn.execute("SELECT COUNT(*) FROM session_scores").fetchone()[0] if table_exists(
        conn, "session_scores") else 0
    return {"sessions": row["n"], "last_started_at": row["last"], "active": row["active"] or 0, "scored": scored}


def scored_session_count(conn: Connection, min_confidence: float) -> int:
    if not table_exists(conn, "session_scores"):
        return 0
    return int(conn.execute(
        "SELECT COUNT(*) FROM session_scores WHERE confidence >= ?", (min_confidence,)
    ).fetchone()[0])


def recent_session_scores(conn: Connection, limit: int = 10) -> list[SessionScoreBrief]:
    if not table_exists(conn, "session_scores"):
        return []
    return [cast(SessionScoreBrief, dict(r)) for r in conn.execute(
        "SELECT session_key, project, score, confidence, judge, created_at FROM session_scores"
        " ORDER BY created_at DESC LIMIT ?", (limit,),
    )]


def predictor_table_stats(conn: Connection) -> PredictorTableStats:
    out: PredictorTableStats = {"comparisons": 0, "trainings": 0, "last_training": None}
    if table_exists(conn, "predictor_comparisons"):
        out["comparisons"] = conn.execute("SELECT COUNT(*) FROM predictor_comparisons").fetchone()[0]
    if table_exists(conn, "predictor_training_log"):
        out["trainings"] = conn.execute("SELECT COUNT(*) FROM predictor_training_log").fetchone()[0]
        row = conn.execute("SELECT * FROM predictor_training_log ORDER BY rowid DESC LIMIT 1").fetchone()
        out["last_training"] = dict(row) if row else None
    return out


# -- repairs (writes: call inside db.with_write_tx()) ----------------------------------
def rebuild_fts(conn: Connection) -> None:
    """Rebuild memories_fts from the memories table (fixes missing and orphan rows)."""
    if is_postgres(conn):
        from kenning.store.pg.search import rebuild_fts as rebuild_postgres
        from kenning.store.pg.narrow import as_pg

        rebuild_postgres(as_pg(conn))
        return
    conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('rebuild')")
