"""Session lifecycle tables: what each session was offered, used, and how it went.

`session_memories` follows the predictive-memory-scorer seed (Phase 0) plus the
agent-relevance-feedback columns and both rankings, so the predictor can learn
from every candidate, injected or not.
"""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE sessions (
    session_key TEXT PRIMARY KEY,
    harness TEXT,
    project TEXT,
    cwd TEXT,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    prompt_count INTEGER NOT NULL DEFAULT 0,
    last_checkpoint_at TEXT,
    status TEXT NOT NULL DEFAULT 'active'
);
CREATE INDEX idx_sessions_started ON sessions(started_at);

CREATE TABLE session_memories (
    id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    source TEXT NOT NULL,
    effective_score REAL,
    predictor_score REAL,
    baseline_rank INTEGER,
    predictor_rank INTEGER,
    final_score REAL NOT NULL,
    rank INTEGER NOT NULL,
    was_injected INTEGER NOT NULL DEFAULT 0,
    relevance_score REAL,
    fts_hit_count INTEGER NOT NULL DEFAULT 0,
    agent_preference TEXT,
    agent_relevance_score REAL,
    agent_feedback_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    UNIQUE (session_key, memory_id)
);
CREATE INDEX idx_session_memories_session ON session_memories(session_key);
CREATE INDEX idx_session_memories_memory ON session_memories(memory_id);

CREATE TABLE session_scores (
    session_key TEXT PRIMARY KEY,
    project TEXT,
    score REAL NOT NULL,
    confidence REAL NOT NULL,
    memories_recalled INTEGER NOT NULL DEFAULT 0,
    memories_used INTEGER NOT NULL DEFAULT 0,
    novel_context_count INTEGER NOT NULL DEFAULT 0,
    missing_topics TEXT NOT NULL DEFAULT '[]',
    continuity_reasoning TEXT,
    judge TEXT NOT NULL DEFAULT 'heuristic',
    created_at TEXT NOT NULL
);

CREATE TABLE summary_jobs (
    id INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL UNIQUE,
    status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    completed_at TEXT
);

CREATE TABLE session_transcripts (
    session_key TEXT PRIMARY KEY,
    transcript TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    chars INTEGER NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE session_checkpoints (
    id INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL,
    trigger TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_checkpoints_session ON session_checkpoints(session_key, created_at);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
