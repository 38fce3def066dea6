"""Foundation schema: memories, their FTS5 index (kept in sync by triggers), history, embeddings."""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE memories (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    content TEXT NOT NULL,
    normalized_content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    type TEXT NOT NULL DEFAULT 'fact',
    importance REAL NOT NULL DEFAULT 0.5 CHECK (importance >= 0 AND importance <= 1),
    confidence REAL NOT NULL DEFAULT 1.0 CHECK (confidence >= 0 AND confidence <= 1),
    tags TEXT NOT NULL DEFAULT '[]',
    project TEXT,
    scope TEXT NOT NULL DEFAULT 'project',
    source TEXT,
    related_files TEXT NOT NULL DEFAULT '[]',
    related_modules TEXT NOT NULL DEFAULT '[]',
    pinned INTEGER NOT NULL DEFAULT 0,
    needs_review INTEGER NOT NULL DEFAULT 0,
    user_verified INTEGER NOT NULL DEFAULT 0,
    superseded_by TEXT,
    valid_until TEXT,
    decay_half_life_days REAL,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    is_deleted INTEGER NOT NULL DEFAULT 0,
    deleted_at TEXT,
    embedding_model TEXT,
    extraction_model TEXT,
    session_key TEXT,
    metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX idx_memories_hash ON memories(content_hash);
CREATE INDEX idx_memories_project ON memories(project, is_deleted);
CREATE INDEX idx_memories_type ON memories(type);
CREATE INDEX idx_memories_created ON memories(created_at);
CREATE INDEX idx_memories_session ON memories(session_key);

CREATE VIRTUAL TABLE memories_fts USING fts5(
    content, tags, content='memories', content_rowid='rid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content, tags) VALUES (new.rid, new.content, new.tags);
END;
CREATE TRIGGER memories_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content, tags)
    VALUES ('delete', old.rid, old.content, old.tags);
END;
CREATE TRIGGER memories_fts_au AFTER UPDATE OF content, tags ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, content, tags)
    VALUES ('delete', old.rid, old.content, old.tags);
    INSERT INTO memories_fts(rowid, content, tags) VALUES (new.rid, new.content, new.tags);
END;

CREATE TABLE memory_history (
    id INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL,
    event TEXT NOT NULL,
    old_content TEXT,
    new_content TEXT,
    changes TEXT NOT NULL DEFAULT '{}',
    actor TEXT,
    reason TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_history_memory ON memory_history(memory_id, id);

CREATE TABLE embeddings (
    rid INTEGER PRIMARY KEY,
    content_hash TEXT NOT NULL,
    model TEXT NOT NULL,
    dims INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (content_hash, model)
);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
