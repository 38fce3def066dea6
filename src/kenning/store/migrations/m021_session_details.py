"""Session details the hooks need beyond m020: context, prompts, injection phase, job results."""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
ALTER TABLE sessions ADD COLUMN context TEXT;
ALTER TABLE sessions ADD COLUMN status_line TEXT;
ALTER TABLE sessions ADD COLUMN last_prompt_at TEXT;
ALTER TABLE sessions ADD COLUMN prompts_since_checkpoint INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
CREATE INDEX idx_sessions_project ON sessions(project, started_at);

ALTER TABLE session_memories ADD COLUMN injected_at TEXT;
ALTER TABLE session_memories ADD COLUMN inject_phase TEXT;
ALTER TABLE session_memories ADD COLUMN prefilter_source TEXT;
ALTER TABLE session_memories ADD COLUMN similarity REAL;
ALTER TABLE session_memories ADD COLUMN diversity_factor REAL;

ALTER TABLE summary_jobs ADD COLUMN result TEXT;

CREATE TABLE session_prompts (
    id INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL,
    idx INTEGER NOT NULL,
    prompt TEXT NOT NULL,
    fts_hits INTEGER NOT NULL DEFAULT 0,
    injected TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL
);
CREATE INDEX idx_session_prompts_session ON session_prompts(session_key, idx);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
