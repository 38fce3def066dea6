"""Which ended sessions have already fed their FTS hits back into entity aspect weights
(memory-pipeline-v2 "Aspect Feedback"), so each session counts once."""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE aspect_feedback_sessions (
    session_key TEXT PRIMARY KEY,
    confirmations INTEGER NOT NULL DEFAULT 0,
    aspects_updated INTEGER NOT NULL DEFAULT 0,
    applied_at TEXT NOT NULL
);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
