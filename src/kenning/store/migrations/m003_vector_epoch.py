"""Vectors are searched in memory (store/vector_index.py); the sqlite-vec tables go.

`vector_epoch.deletions` counts deleted `embeddings` rows (a trigger keeps it), so each
process's in-memory index can tell "rows were only added" (append) from "rows went" (reload).
The vec0 tables of earlier builds duplicated every vector; dropping a virtual table needs its
module, so sqlite-vec is loaded for that one step.
"""

from kenning.store.backend import SqliteConnection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE IF NOT EXISTS vector_epoch (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    deletions INTEGER NOT NULL
);
INSERT OR IGNORE INTO vector_epoch(id, deletions) VALUES (1, 0);
CREATE TRIGGER IF NOT EXISTS embeddings_count_deletions AFTER DELETE ON embeddings BEGIN
    UPDATE vector_epoch SET deletions = deletions + 1 WHERE id = 1;
END;
"""


def up(conn: SqliteConnection) -> None:  # SQLite only: loading an extension
    execute_script(conn, SCHEMA)
    legacy = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'vec_embeddings_[0-9]*'"
        " AND sql LIKE '%USING vec0%'"
    )]
    if legacy:
        import sqlite_vec

        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
        for table in legacy:
            conn.execute(f"DROP TABLE {table}")
