"""Sessions survive a missed end (issue 26).

- sessions.transcript_path: where the harness keeps the session's transcript (sent by the
  session-start hook); a session left `active` is ended from it, read through the confined
  reader (core/transcript_file.py), on the daemon that runs on the user's machine only.
- spool_replayed: the spool events (core/spool.py, by file name) already replayed, so an event
  replayed twice is applied once.
"""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
ALTER TABLE sessions ADD COLUMN transcript_path TEXT;
CREATE INDEX idx_sessions_status ON sessions(status, started_at);
CREATE TABLE spool_replayed (
    name TEXT PRIMARY KEY,
    replayed_at TEXT NOT NULL
);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
