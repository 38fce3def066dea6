"""All SQL on documents and document_memories (memory-pipeline-v2 "Document Ingest")."""

from __future__ import annotations

import json
import uuid
from typing import TypedDict, cast

from kenning.core.clock import now_iso
from kenning.core.errors import NotFound
from kenning.store.backend import Connection, Row

STATUSES = ("queued", "extracting", "chunking", "embedding", "indexing", "done", "failed")


class Document(TypedDict, total=False):
    """A document (documents; `tags` decoded). Lists leave out raw_content."""

    id: str
    source_type: str
    source_url: str | None
    title: str | None
    raw_content: str | None
    content_type: str | None
    byte_length: int | None
    project: str | None
    tags: list[str]
    status: str
    error: str | None
    chunk_count: int
    memory_count: int
    created_at: str
    updated_at: str
    completed_at: str | None


class DocumentChunk(TypedDict):
    chunk_index: int
    memory_id: str
    content: str | None


def _row(row: Row) -> Document:
    data = dict(row)
    data["tags"] = json.loads(data.get("tags") or "[]")
    return cast(Document, data)


def create_document(
    conn: Connection, *, source_type: str, raw_content: str | None = None, source_url: str | None = None,
    title: str | None = None, project: str | None = None, tags: list[str] | None = None,
    content_type: str | None = None,
) -> str:
    doc_id = uuid.uuid4().hex[:16]
    stamp = now_iso()
    conn.execute(
        "INSERT INTO documents(id, source_type, source_url, title, raw_content, content_type, byte_length,"
        " project, tags, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?)",
        (doc_id, source_type, source_url, title, raw_content, content_type,
         len(raw_content.encode("utf-8")) if raw_content is not None else None, project,
         json.dumps(tags or []), stamp, stamp),
    )
    return doc_id


def get_document(conn: Connection, doc_id: str) -> Document:
    row = conn.execute("SELECT * FROM documents WHERE id = ?", (doc_id,)).fetchone()
    if row is None:
        raise NotFound(f"no document with id {doc_id!r}")
    return _row(row)


def list_documents(conn: Connection, *, status: str | None = None, limit: int = 50,
                   offset: int = 0) -> tuple[list[Document], int]:
    where, params = ("WHERE status = ?", [status]) if status else ("", [])
    total = conn.execute(f"SELECT COUNT(*) FROM documents {where}", params).fetchone()[0]
    rows = conn.execute(
        f"SELECT id, source_type, source_url, title, content_type, byte_length, project, tags, status, error,"
        f" chunk_count, memory_count, created_at, updated_at, completed_at FROM documents {where}"
        f" ORDER BY created_at DESC LIMIT ? OFFSET ?", params + [limit, offset],
    ).fetchall()
    return [_row(r) for r in rows], total


def set_status(conn: Connection, doc_id: str, status: str, *, error: str | None = None, **fields: str | int | None) -> None:
    """Move a document to `status`; extra fields (title, raw_content, content_type, byte_length,
    chunk_count, memory_count) are updated with it."""
    allowed = {"title", "raw_content", "content_type", "byte_length", "chunk_count", "memory_count"}
    unknown = set(fields) - allowed
    if unknown:
        raise ValueError(f"cannot set document field(s) {sorted(unknown)}")
    stamp = now_iso()
    values: dict[str, object] = {"status": status, "error": error, "updated_at": stamp, **fields}
    if status in ("done", "failed"):
        values["completed_at"] = stamp
    assignments = ", ".join(f"{k} = ?" for k in values)
    conn.execute(f"UPDATE documents SET {assignments} WHERE id = ?", [*values.values(), doc_id])


def chunk_memory(conn: Connection, doc_id: str, chunk_index: int) -> str | None:
    row = conn.execute(
        "SELECT memory_id FROM document_memories WHERE document_id = ? AND chunk_index = ?", (doc_id, chunk_index)
    ).fetchone()
    return row[0] if row else None


def link_chunk(conn: Connection, doc_id: str, memory_id: str, chunk_index: int) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO document_memories(document_id, memory_id, chunk_index, created_at)"
        " VALUES (?, ?, ?, ?)", (doc_id, memory_id, chunk_index, now_iso()),
    )


def document_chunks(conn: Connection, doc_id: str) -> list[DocumentChunk]:
    rows = conn.execute(
        "SELECT dm.chunk_index, dm.memory_id, m.content FROM document_memories dm"
        " LEFT JOIN memories m ON m.id = dm.memory_id WHERE dm.document_id = ? ORDER BY dm.chunk_index",
        (doc_id,),
    ).fetchall()
    return [cast(DocumentChunk, dict(r)) for r in rows]
