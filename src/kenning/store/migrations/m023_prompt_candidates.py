"""Prompt candidates (issue 32): every memory a prompt's recall offered, with the calibrated
probability that the session needs it (`sessions.prompt_bar`) and the features it was computed
from, whether it was shown, and the rating the agent gave it later in the session (filled by
feedback). One row per (session, prompt index, memory). The prompt bar's calibrator is fitted
offline from these rows (bench/fit_prompt_bar.py); the predictor's interleaving reads the pool.
"""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE prompt_candidates (
    session_key TEXT NOT NULL,
    prompt_index INTEGER NOT NULL,
    memory_id TEXT NOT NULL,
    recall_rank INTEGER NOT NULL,
    probability REAL NOT NULL,
    features TEXT NOT NULL,
    shown INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_key, prompt_index, memory_id)
);
CREATE INDEX idx_prompt_candidates_memory ON prompt_candidates(memory_id);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
