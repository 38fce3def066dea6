"""One job queue: session summary jobs move from summary_jobs into memory_jobs (issue 13).

Each summary_jobs row becomes a memory_jobs row of job type `session_summary` whose dedup key
and payload name the session, keeping attempts, error, result and timestamps:

    summary_jobs.status   memory_jobs.status
    pending               pending   (ready at once)
    running               pending   (its daemon stopped mid-job; the old start-up reset did this)
    done                  completed (completed_at kept)
    failed                dead      (failed_at = its updated_at; a new session-end queues a fresh job)

then summary_jobs is dropped. Plain statements with `?` parameters: the same code runs on
PostgreSQL through store/pg/translate.py, no twin needed.
"""

import json

from kenning.core.clock import now_iso
from kenning.store.backend import Connection

JOB_TYPE = "session_summary"  # kenning.store.sessions.SUMMARY_JOB when this migration was written
STATUS = {"pending": "pending", "running": "pending", "done": "completed", "failed": "dead"}


def up(conn: Connection) -> None:
    now = now_iso()
    rows = conn.execute(
        "SELECT session_key, status, attempts, error, result, created_at, updated_at, completed_at"
        " FROM summary_jobs ORDER BY id"
    ).fetchall()
    for row in rows:
        status = STATUS.get(row["status"], "pending")
        conn.execute(
            "INSERT INTO memory_jobs(job_type, dedup_key, payload, status, attempts, max_attempts, run_after,"
            " last_error, result, created_at, updated_at, completed_at, failed_at)"
            " VALUES (?, ?, ?, ?, ?, 3, ?, ?, ?, ?, ?, ?, ?)",
            (JOB_TYPE, row["session_key"], json.dumps({"session_key": row["session_key"]}), status,
             row["attempts"], now, row["error"], row["result"], row["created_at"], row["updated_at"],
             row["completed_at"] if status == "completed" else None,
             row["updated_at"] if status == "dead" else None),
        )
    conn.execute("DROP TABLE summary_jobs")
