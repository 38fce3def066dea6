"""Predictor evidence per session (issue 11): the training confidence with its parts, and the
candidates the session touched by itself (transcript named their files / identifiers /
entities). Written by the daemon at session end; the sidecar reads them for labels and
features; the count of usable sessions decides when the sidecar starts.
"""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE predictor_session_evidence (
    session_key TEXT PRIMARY KEY,
    confidence REAL NOT NULL,
    usable INTEGER NOT NULL DEFAULT 0,
    parts TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
CREATE INDEX idx_predictor_evidence_usable ON predictor_session_evidence(usable, confidence);

CREATE TABLE predictor_touched (
    session_key TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (session_key, memory_id)
);
CREATE INDEX idx_predictor_touched_memory ON predictor_touched(memory_id);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
