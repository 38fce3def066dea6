"""Prospective hints (memory-pipeline-v2 "Prospective Indexing"): hypothetical future queries
a memory answers, searchable with BM25 through memory_hints_fts (kept in sync by triggers)."""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE memory_hints (
    rid INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    hint TEXT NOT NULL,
    model TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (memory_id, hint)
);
CREATE INDEX idx_hints_memory ON memory_hints(memory_id);

CREATE VIRTUAL TABLE memory_hints_fts USING fts5(
    hint, content='memory_hints', content_rowid='rid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memory_hints_fts_ai AFTER INSERT ON memory_hints BEGIN
    INSERT INTO memory_hints_fts(rowid, hint) VALUES (new.rid, new.hint);
END;
CREATE TRIGGER memory_hints_fts_ad AFTER DELETE ON memory_hints BEGIN
    INSERT INTO memory_hints_fts(memory_hints_fts, rowid, hint) VALUES ('delete', old.rid, old.hint);
END;
CREATE TRIGGER memory_hints_fts_au AFTER UPDATE OF hint ON memory_hints BEGIN
    INSERT INTO memory_hints_fts(memory_hints_fts, rowid, hint) VALUES ('delete', old.rid, old.hint);
    INSERT INTO memory_hints_fts(rowid, hint) VALUES (new.rid, new.hint);
END;
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
