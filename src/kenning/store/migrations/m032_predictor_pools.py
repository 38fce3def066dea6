"""Predictor pools beyond session start (issue 11): the first prompt's injection pool, ranked by
the predictor with the prompt as context. One row per (session, phase, memory) with both
rankings; the scoring context is in predictor_session_context under '<session_key>#<phase>'.
Training turns each recorded pool into one more sample of its session (labels by memory id).
"""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE predictor_pools (
    session_key TEXT NOT NULL,
    phase TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    baseline_rank INTEGER,
    predictor_rank INTEGER,
    predictor_score REAL,
    final_rank INTEGER,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_key, phase, memory_id)
);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
