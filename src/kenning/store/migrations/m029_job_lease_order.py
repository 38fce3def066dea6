"""Leasing a job walks an index in the lease's own order instead of sorting every pending job.

`lease` takes the oldest ready pending job: `status = 'pending' AND job_type IN (…) AND
run_after <= now ORDER BY priority DESC, created_at, id LIMIT 1`. The only index was
`idx_jobs_ready(status, job_type, run_after, priority, id)`: SQLite searched it on the run_after
range and sorted all ready jobs for each lease — 17 ms per lease with 21,600 pending (a 20k
import's extraction backlog, issue 36), inside the write transaction, once per job. With this
index (and `+run_after` in the query, so the planner does not take the range instead) the first
ready row in order is the answer: 0.04 ms. (Numbered after m026, which made memory_jobs the one queue; 010-019 are taken.)
"""

from kenning.store.backend import Connection


def up(conn: Connection) -> None:
    conn.execute(
        "CREATE INDEX IF NOT EXISTS idx_jobs_lease_order"
        " ON memory_jobs(status, job_type, priority DESC, created_at, id)"
    )
