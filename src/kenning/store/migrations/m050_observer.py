"""Observer tables (SPEC S8, memory-system-v4 sections 4, 5, 12, 18, 19).

- observer_scratchpads: the checkpoint of each live session's in-memory scratchpad;
- observer_sessions: per-session observer outcome (type, A/B group, steps, promotions);
- observer_signals: the persisted signal summary of each finished session, counted across
  sessions by the frequency filter;
- observer_co_access_edges / observer_file_nodes / observer_synthesis_log: the incremental
  cross-session index and which synthesis thresholds already ran;
- memory_lookup: an index of memories by file ('file:<path>') and observer keys
  ('error:<fingerprint>', 'search:<pattern>') kept by triggers, so the step decider is one
  indexed query.
"""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE observer_scratchpads (
    session_key TEXT PRIMARY KEY,
    project TEXT,
    state TEXT NOT NULL,
    step INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL
);

CREATE TABLE observer_sessions (
    session_key TEXT PRIMARY KEY,
    project TEXT,
    session_type TEXT,
    ab_group TEXT NOT NULL DEFAULT 'full',
    steps INTEGER NOT NULL DEFAULT 0,
    tool_calls INTEGER NOT NULL DEFAULT 0,
    file_rereads INTEGER NOT NULL DEFAULT 0,
    step_injections INTEGER NOT NULL DEFAULT 0,
    signals INTEGER NOT NULL DEFAULT 0,
    promoted TEXT NOT NULL DEFAULT '[]',
    reinforced TEXT NOT NULL DEFAULT '[]',
    finished_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_observer_sessions_project ON observer_sessions(project, finished_at);

CREATE TABLE observer_signals (
    id INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL,
    project TEXT,
    signal_class TEXT NOT NULL,
    key TEXT NOT NULL,
    files TEXT NOT NULL DEFAULT '[]',
    detail TEXT NOT NULL DEFAULT '{}',
    step INTEGER NOT NULL DEFAULT 0,
    contaminated INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_observer_signals_key ON observer_signals(project, signal_class, key);
CREATE INDEX idx_observer_signals_session ON observer_signals(session_key);

CREATE TABLE observer_file_nodes (
    project TEXT NOT NULL DEFAULT '',
    path TEXT NOT NULL,
    sessions INTEGER NOT NULL DEFAULT 0,
    edit_sessions INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (project, path)
);

CREATE TABLE observer_co_access_edges (
    project TEXT NOT NULL DEFAULT '',
    file_a TEXT NOT NULL,
    file_b TEXT NOT NULL,
    sessions INTEGER NOT NULL DEFAULT 0,
    edit_sessions INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (project, file_a, file_b)
);

CREATE TABLE observer_synthesis_log (
    project TEXT NOT NULL DEFAULT '',
    threshold INTEGER NOT NULL,
    memories TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    PRIMARY KEY (project, threshold)
);

CREATE TABLE memory_lookup (
    key TEXT NOT NULL,
    memory_id TEXT NOT NULL
);
CREATE INDEX idx_memory_lookup_key ON memory_lookup(key);
CREATE INDEX idx_memory_lookup_memory ON memory_lookup(memory_id);

CREATE TRIGGER memory_lookup_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memory_lookup(key, memory_id)
        SELECT 'file:' || value, new.id FROM json_each(
            CASE WHEN json_valid(new.related_files) THEN new.related_files ELSE '[]' END)
        WHERE type = 'text';
    INSERT INTO memory_lookup(key, memory_id)
        SELECT value, new.id FROM json_each(
            CASE WHEN json_valid(new.metadata) AND json_type(new.metadata, '$.lookup_keys') = 'array'
                 THEN json_extract(new.metadata, '$.lookup_keys') ELSE '[]' END)
        WHERE type = 'text';
END;
CREATE TRIGGER memory_lookup_au AFTER UPDATE OF related_files, metadata ON memories BEGIN
    DELETE FROM memory_lookup WHERE memory_id = old.id;
    INSERT INTO memory_lookup(key, memory_id)
        SELECT 'file:' || value, new.id FROM json_each(
            CASE WHEN json_valid(new.related_files) THEN new.related_files ELSE '[]' END)
        WHERE type = 'text';
    INSERT INTO memory_lookup(key, memory_id)
        SELECT value, new.id FROM json_each(
            CASE WHEN json_valid(new.metadata) AND json_type(new.metadata, '$.lookup_keys') = 'array'
                 THEN json_extract(new.metadata, '$.lookup_keys') ELSE '[]' END)
        WHERE type = 'text';
END;
CREATE TRIGGER memory_lookup_ad AFTER DELETE ON memories BEGIN
    DELETE FROM memory_lookup WHERE memory_id = old.id;
END;

INSERT INTO memory_lookup(key, memory_id)
    SELECT 'file:' || j.value, m.id FROM memories m, json_each(
        CASE WHEN json_valid(m.related_files) THEN m.related_files ELSE '[]' END) j
    WHERE j.type = 'text';
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
