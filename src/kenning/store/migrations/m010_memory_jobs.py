"""memory_jobs: the background job queue (memory-pipeline-v2 "Worker Model").

status: pending → leased → completed | pending (retry after run_after) | dead.
A partial unique index on (job_type, dedup_key) over pending/leased rows makes enqueue
dedup atomic: at most one live job per (type, key).
"""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE memory_jobs (
    id INTEGER PRIMARY KEY,
    job_type TEXT NOT NULL,
    memory_id TEXT,
    document_id TEXT,
    dedup_key TEXT,
    payload TEXT NOT NULL DEFAULT '{}',
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'leased', 'completed', 'dead')),
    priority INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 3,
    run_after TEXT NOT NULL,
    leased_at TEXT,
    leased_by TEXT,
    last_error TEXT,
    result TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    completed_at TEXT,
    failed_at TEXT
);
CREATE INDEX idx_jobs_ready ON memory_jobs(status, job_type, run_after, priority, id);
CREATE INDEX idx_jobs_memory ON memory_jobs(memory_id);
CREATE INDEX idx_jobs_leased ON memory_jobs(status, leased_at);
CREATE UNIQUE INDEX idx_jobs_dedup_live ON memory_jobs(job_type, dedup_key)
    WHERE status IN ('pending', 'leased') AND dedup_key IS NOT NULL;
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
