"""The memory_jobs queue: enqueue with dedup, atomic lease, retry with backoff, dead, reaper.

memory-pipeline-v2 "Worker Model". Every job type (extract, document_ingest, prospective_index,
structural_classify, summary, ...) lives in this one table; workers lease by job type.

Life of a job::

    enqueue() ─▶ pending ─lease()─▶ leased ─complete()─▶ completed
                    ▲                  │
                    │   fail(): attempts < max_attempts, run_after = now + backoff
                    ├──────────────────┤
                    │   defer(): budget/provider wait, the attempt is given back
                    ├──────────────────┤
                    │   reap_stale(): lease older than lease_timeout (worker died)
                    └──────────────────┘
                                       └─fail()/reap at attempts >= max_attempts─▶ dead

- `lease()` selects and updates in ONE write transaction, so two workers (threads or
  processes) never lease the same row; `attempts` is incremented at lease time.
- Enqueue dedup: at most one pending/leased job per (job_type, dedup_key); dedup_key defaults
  to memory_id, else document_id. A partial unique index enforces it.
- complete/fail/defer take the worker id that leased the job and do nothing (return False)
  if the lease was lost meanwhile (reaped and re-leased elsewhere).
- `backoff_delay()` is the retry schedule: 1 s base doubling to a 30 s cap, + ≤ 500 ms jitter.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from kenning.core.clock import now_iso, parse_iso, to_iso, utcnow
from kenning.store.backend import Connection, Row, StoreDatabase, inserted_id, is_postgres
from kenning.store.db import IntegrityError

STATUSES = ("pending", "leased", "completed", "dead")


@dataclass
class Job:
    id: int
    job_type: str
    memory_id: str | None
    document_id: str | None
    dedup_key: str | None
    payload: dict[str, Any]
    status: str
    attempts: int
    max_attempts: int
    run_after: str
    leased_at: str | None = None
    leased_by: str | None = None
    last_error: str | None = None
    result: dict[str, Any] | None = None
    created_at: str = ""
    updated_at: str = ""
    completed_at: str | None = None
    failed_at: str | None = None
    priority: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        data = dict(self.__dict__)
        data.pop("extra", None)
        return data


def _row_to_job(d: Row | Mapping[str, Any]) -> Job:
    """A job from its row: SQLite's, or the column dict PostgreSQL's lease returns (values as stored)."""
    return Job(
        id=d["id"], job_type=d["job_type"], memory_id=d["memory_id"], document_id=d["document_id"],
        dedup_key=d["dedup_key"], payload=json.loads(d["payload"] or "{}"), status=d["status"],
        attempts=d["attempts"], max_attempts=d["max_attempts"], run_after=d["run_after"],
        leased_at=d["leased_at"], leased_by=d["leased_by"], last_error=d["last_error"],
        result=json.loads(d["result"]) if d["result"] else None, created_at=d["created_at"],
        updated_at=d["updated_at"], completed_at=d["completed_at"], failed_at=d["failed_at"],
        priority=d["priority"],
    )


def backoff_delay(
    failures: int, *, base_s: float = 1.0, cap_s: float = 30.0, jitter_s: float = 0.5,
    rng: random.Random | None = None,
) -> float:
    """Seconds to wait after `failures` consecutive failures: min(base·2^(n-1), cap) + U(0, jitter)."""
    if failures <= 0:
        return 0.0
    exp = min(failures - 1, 32)
    delay = min(base_s * (2 ** exp), cap_s)
    return float(delay + (rng or random).uniform(0.0, jitter_s))


def _later(seconds: float) -> str:
    return to_iso(utcnow() + timedelta(seconds=max(0.0, seconds)))


def enqueue(
    db: StoreDatabase, job_type: str, *, memory_id: str | None = None, document_id: str | None = None,
    payload: Mapping[str, object] | None = None, dedup_key: str | None = None, max_attempts: int = 3,
    priority: int = 0, delay_s: float = 0.0,
) -> tuple[int, bool]:
    """Add a job; returns (job_id, created). A live duplicate returns (its id, False).

    Safe inside an outer `with_write_tx()` (nests as a savepoint). From inside a write
    transaction where only the connection is at hand, use `enqueue_in_tx(conn, ...)`.
    """
    with db.with_write_tx() as conn:
        return enqueue_in_tx(conn, job_type, memory_id=memory_id, document_id=document_id,
                             payload=payload, dedup_key=dedup_key, max_attempts=max_attempts,
                             priority=priority, delay_s=delay_s)


def enqueue_in_tx(
    conn: Connection, job_type: str, *, memory_id: str | None = None, document_id: str | None = None,
    payload: Mapping[str, object] | None = None, dedup_key: str | None = None, max_attempts: int = 3,
    priority: int = 0, delay_s: float = 0.0,
) -> tuple[int, bool]:
    """enqueue() on the caller's write connection (e.g. the memory's own insert tx)."""
    key = dedup_key if dedup_key is not None else (memory_id or document_id)
    now = now_iso()
    run_after = _later(delay_s) if delay_s > 0 else now
    live = ("SELECT id FROM memory_jobs WHERE job_type = ? AND dedup_key = ?"
            " AND status IN ('pending', 'leased') LIMIT 1")
    if key is not None:
        existing = conn.execute(live, (job_type, key)).fetchone()
        if existing is not None:
            return int(existing[0]), False
    try:
        cur = conn.execute(
            "INSERT INTO memory_jobs(job_type, memory_id, document_id, dedup_key, payload, status,"
            " priority, attempts, max_attempts, run_after, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, 'pending', ?, 0, ?, ?, ?, ?)",
            (job_type, memory_id, document_id, key, json.dumps(payload or {}), priority,
             max(1, int(max_attempts)), run_after, now, now),
        )
    except IntegrityError:  # raced with another enqueue of the same key
        return int(conn.execute(live, (job_type, key)).fetchone()[0]), False
    return inserted_id(cur), True


def next_ready_sql(type_count: int) -> str:
    """SQLite: the id of the oldest ready pending job of `type_count` job types (parameters: the
    types, then now). `+run_after` keeps the planner on idx_jobs_lease_order (m029), walked in the
    lease's order, instead of sorting every ready job of a large backlog for each lease."""
    marks = ",".join("?" for _ in range(type_count))
    return (f"SELECT id FROM memory_jobs WHERE status = 'pending' AND job_type IN ({marks})"
            " AND +run_after <= ? ORDER BY priority DESC, created_at, id LIMIT 1")


def lease(db: StoreDatabase, job_types: list[str] | tuple[str, ...], worker_id: str) -> Job | None:
    """Atomically take the oldest ready pending job of these types (select + update, one tx)."""
    if not job_types:
        return None
    now = now_iso()
    with db.with_write_tx() as conn:
        if is_postgres(conn):
            from kenning.store.pg.search import lease_job
            from kenning.store.pg.narrow import as_pg

            leased = lease_job(as_pg(conn), job_types, worker_id, now)
            return _row_to_job(leased) if leased else None
        row = conn.execute(next_ready_sql(len(job_types)), (*job_types, now)).fetchone()
        if row is None:
            return None
        conn.execute(
            "UPDATE memory_jobs SET status = 'leased', leased_at = ?, leased_by = ?,"
            " attempts = attempts + 1, updated_at = ? WHERE id = ? AND status = 'pending'",
            (now, worker_id, now, row[0]),
        )
        leased = conn.execute("SELECT * FROM memory_jobs WHERE id = ?", (row[0],)).fetchone()
    return _row_to_job(leased)


def lease_key_in_tx(conn: Connection, job_type: str, dedup_key: str, worker_id: str) -> Job | None:
    """Lease the live pending job of (job_type, dedup_key) at once, ready or not, on the caller's
    write connection: for a caller that waits on this one job (a synchronous session-end)."""
    now = now_iso()
    leased = conn.execute(
        "UPDATE memory_jobs SET status = 'leased', leased_at = ?, leased_by = ?, attempts = attempts + 1,"
        " updated_at = ? WHERE job_type = ? AND dedup_key = ? AND status = 'pending'",
        (now, worker_id, now, job_type, dedup_key),
    ).rowcount
    if not leased:
        return None
    row = conn.execute(
        "SELECT * FROM memory_jobs WHERE job_type = ? AND dedup_key = ? AND status = 'leased'"
        " AND leased_by = ? ORDER BY id DESC LIMIT 1", (job_type, dedup_key, worker_id),
    ).fetchone()
    return _row_to_job(row)


def latest_for_key(conn: Connection, job_type: str, dedup_key: str) -> Job | None:
    """The newest job of (job_type, dedup_key), live or finished."""
    row = conn.execute(
        "SELECT * FROM memory_jobs WHERE job_type = ? AND dedup_key = ? ORDER BY id DESC LIMIT 1",
        (job_type, dedup_key),
    ).fetchone()
    return _row_to_job(row) if row else None


def _owned(worker_id: str | None) -> tuple[str, tuple[str, ...]]:
    if worker_id is None:
        return "", ()
    return " AND leased_by = ?", (worker_id,)


def complete(db: StoreDatabase, job_id: int, result: Mapping[str, object] | None = None,
             worker_id: str | None = None) -> bool:
    """Mark a leased job completed with its result payload; False if the lease was lost."""
    now = now_iso()
    cond, args = _owned(worker_id)
    with db.with_write_tx() as conn:
        cur = conn.execute(
            "UPDATE memory_jobs SET status = 'completed', result = ?, completed_at = ?, updated_at = ?,"
            f" last_error = NULL WHERE id = ? AND status = 'leased'{cond}",
            (json.dumps(result or {}, default=str), now, now, job_id, *args),
        )
        return cur.rowcount > 0


def fail(db: StoreDatabase, job_id: int, error: str, *, retry_delay_s: float = 0.0,
         worker_id: str | None = None, max_attempts: int | None = None) -> str | None:
    """Record a failure: back to pending after `retry_delay_s`, or dead at max attempts.

    `max_attempts` (the worker's configured limit) overrides the job's own column when given.
    Returns the new status ('pending' | 'dead'), or None if the lease was lost.
    """
    now = now_iso()
    cond, args = _owned(worker_id)
    with db.with_write_tx() as conn:
        row = conn.execute(
            f"SELECT attempts, max_attempts FROM memory_jobs WHERE id = ? AND status = 'leased'{cond}",
            (job_id, *args),
        ).fetchone()
        if row is None:
            return None
        if row[0] >= (max_attempts or row[1]):
            conn.execute(
                "UPDATE memory_jobs SET status = 'dead', last_error = ?, failed_at = ?, updated_at = ?,"
                " leased_at = NULL WHERE id = ?", (error[:2000], now, now, job_id),
            )
            return "dead"
        conn.execute(
            "UPDATE memory_jobs SET status = 'pending', last_error = ?, run_after = ?, updated_at = ?,"
            " leased_at = NULL, leased_by = NULL WHERE id = ?",
            (error[:2000], _later(retry_delay_s), now, job_id),
        )
        return "pending"


def defer(db: StoreDatabase, job_id: int, delay_s: float, reason: str,
          worker_id: str | None = None) -> bool:
    """Put a leased job back without spending an attempt (e.g. token budget exhausted)."""
    now = now_iso()
    cond, args = _owned(worker_id)
    with db.with_write_tx() as conn:
        cur = conn.execute(
            "UPDATE memory_jobs SET status = 'pending', attempts = MAX(attempts - 1, 0), last_error = ?,"
            " run_after = ?, updated_at = ?, leased_at = NULL, leased_by = NULL"
            f" WHERE id = ? AND status = 'leased'{cond}",
            (reason[:2000], _later(delay_s), now, job_id, *args),
        )
        return cur.rowcount > 0


def reap_stale(db: StoreDatabase, lease_timeout_ms: int) -> dict[str, int]:
    """Leases older than `lease_timeout_ms` go back to pending (or dead if out of attempts)."""
    now = now_iso()
    cutoff = to_iso(utcnow() - timedelta(milliseconds=lease_timeout_ms))
    with db.with_write_tx() as conn:
        dead = conn.execute(
            "UPDATE memory_jobs SET status = 'dead', failed_at = ?, updated_at = ?, leased_at = NULL,"
            " last_error = COALESCE(last_error, '') || ' [lease expired at max attempts]'"
            " WHERE status = 'leased' AND leased_at <= ? AND attempts >= max_attempts",
            (now, now, cutoff),
        ).rowcount
        requeued = conn.execute(
            "UPDATE memory_jobs SET status = 'pending', run_after = ?, updated_at = ?, leased_at = NULL,"
            " leased_by = NULL, last_error = 'lease expired (worker died or hung)'"
            " WHERE status = 'leased' AND leased_at <= ?",
            (now, now, cutoff),
        ).rowcount
    return {"requeued": requeued, "dead": dead}


def get_job(db: StoreDatabase, job_id: int) -> Job | None:
    row = db.reader().execute("SELECT * FROM memory_jobs WHERE id = ?", (job_id,)).fetchone()
    return _row_to_job(row) if row else None


def list_jobs(db: StoreDatabase, *, status: str | None = None, job_type: str | None = None,
              memory_id: str | None = None, limit: int = 100) -> list[Job]:
    where, args = [], []
    for column, value in (("status", status), ("job_type", job_type), ("memory_id", memory_id)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    rows = db.reader().execute(
        f"SELECT * FROM memory_jobs{clause} ORDER BY id DESC LIMIT ?", (*args, limit)
    ).fetchall()
    return [_row_to_job(r) for r in rows]


def queue_depths(db: StoreDatabase) -> dict[str, dict[str, int]]:
    """{job_type: {status: count}} with every status present (zero when none)."""
    rows = db.reader().execute(
        "SELECT job_type, status, COUNT(*) FROM memory_jobs GROUP BY job_type, status"
    ).fetchall()
    depths: dict[str, dict[str, int]] = {}
    for job_type, status, count in rows:
        depths.setdefault(job_type, dict.fromkeys(STATUSES, 0))[status] = int(count)
    return depths


def count_by_status(db: StoreDatabase) -> dict[str, int]:
    """{status: count} over every job type (statuses with no job are absent)."""
    rows = db.reader().execute("SELECT status, COUNT(*) FROM memory_jobs GROUP BY status").fetchall()
    return {status: int(count) for status, count in rows}


def count_stale_leases(db: StoreDatabase, lease_timeout_ms: int) -> int:
    cutoff = to_iso(utcnow() - timedelta(milliseconds=lease_timeout_ms))
    row = db.reader().execute(
        "SELECT COUNT(*) FROM memory_jobs WHERE status = 'leased' AND leased_at <= ?", (cutoff,)
    ).fetchone()
    return int(row[0])


def requeue_dead(db: StoreDatabase, *, job_type: str | None = None, limit: int = 100) -> int:
    """Give dead jobs a fresh set of attempts (maintenance `requeueDeadJobs`)."""
    now = now_iso()
    type_clause = " AND job_type = ?" if job_type else ""
    args: tuple[Any, ...] = (job_type,) if job_type else ()
    with db.with_write_tx() as conn:
        ids = [r[0] for r in conn.execute(
            f"SELECT id FROM memory_jobs WHERE status = 'dead'{type_clause} ORDER BY id LIMIT ?",
            (*args, limit),
        )]
        done = 0
        for job_id in ids:
            try:
                done += conn.execute(
                    "UPDATE memory_jobs SET status = 'pending', attempts = 0, run_after = ?,"
                    " updated_at = ?, failed_at = NULL WHERE id = ?", (now, now, job_id),
                ).rowcount
            except IntegrityError:  # a live job with the same key exists already
                continue
        return done


def purge_jobs(db: StoreDatabase, status: str, older_than: str, limit: int = 500) -> int:
    """Delete completed (by completed_at) or dead (by failed_at) jobs older than a timestamp."""
    column = {"completed": "completed_at", "dead": "failed_at"}.get(status)
    if column is None:
        raise ValueError(f"purge_jobs: status must be 'completed' or 'dead', not {status!r}")
    with db.with_write_tx() as conn:
        return conn.execute(
            f"DELETE FROM memory_jobs WHERE id IN (SELECT id FROM memory_jobs WHERE status = ?"
            f" AND {column} < ? ORDER BY id LIMIT ?)",
            (status, older_than, limit),
        ).rowcount


def oldest_pending_age_s(db: StoreDatabase, job_type: str | None = None) -> float | None:
    clause, args = (" AND job_type = ?", (job_type,)) if job_type else ("", ())
    row = db.reader().execute(
        f"SELECT MIN(created_at) FROM memory_jobs WHERE status = 'pending'{clause}", args
    ).fetchone()
    if not row or row[0] is None:
        return None
    return max(0.0, (utcnow() - parse_iso(row[0])).total_seconds())
