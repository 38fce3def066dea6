"""Documents (memory-pipeline-v2 "Document Ingest"): a source (text or URL) whose chunks are
stored as `document_chunk` memories; `status` walks queued → extracting → chunking →
embedding → indexing → done (or failed, with `error`)."""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE documents (
    id TEXT PRIMARY KEY,
    source_type TEXT NOT NULL CHECK (source_type IN ('text', 'url')),
    source_url TEXT,
    title TEXT,
    raw_content TEXT,
    content_type TEXT,
    byte_length INTEGER,
    project TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL DEFAULT 'queued',
    error TEXT,
    chunk_count INTEGER NOT NULL DEFAULT 0,
    memory_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    completed_at TEXT
);
CREATE INDEX idx_documents_status ON documents(status, created_at);

CREATE TABLE document_memories (
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    memory_id TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (document_id, chunk_index)
);
CREATE INDEX idx_document_memories_memory ON document_memories(memory_id);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
