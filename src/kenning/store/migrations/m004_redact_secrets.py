"""Redact secrets already stored before the scanner existed (issue 12: secrets never in clear).

Runs once on an existing store with `kenning.core.secrets.redact` over every place text is kept:
memories (content, tags; the content hash follows, and the maintenance re-embedder gives the
redacted text a vector while the vector of the old text is deleted), history, entity
attributes, entities named after a secret (deleted, with their mentions), hints, checkpoints,
prompts, transcripts and documents. The FTS indexes are then optimized so no old term stays in
a segment. A fresh database has nothing to do here. It redacts whatever `secrets:` says: that
setting did not exist when the data was stored.
"""

from __future__ import annotations

import hashlib

from kenning.core.secrets import redact, scan
from kenning.core.text import normalize_content
from kenning.store.backend import Connection


def _tables(conn: Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _redact_column(conn: Connection, table: str, key: str, column: str) -> int:
    changed = 0
    rows = conn.execute(f"SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL").fetchall()
    for row_key, text in rows:
        clean = redact(text) if isinstance(text, str) else text
        if clean != text:
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE {key} = ?", (clean, row_key))
            changed += 1
    return changed


def _memories(conn: Connection) -> int:
    changed = 0
    for rid, content, tags, old_hash in conn.execute(
        "SELECT rid, content, tags, content_hash FROM memories").fetchall():
        clean, clean_tags = redact(content), redact(tags or "[]")
        if clean == content and clean_tags == tags:
            continue
        norm = normalize_content(clean)
        conn.execute("UPDATE memories SET content = ?, normalized_content = ?, content_hash = ?, tags = ?"
                     " WHERE rid = ?", (norm.storage, norm.normalized, norm.content_hash, clean_tags, rid))
        if norm.content_hash != old_hash:
            conn.execute("DELETE FROM embeddings WHERE content_hash = ? AND NOT EXISTS"
                         " (SELECT 1 FROM memories WHERE content_hash = ?)", (old_hash, old_hash))
        changed += 1
    return changed


def up(conn: Connection) -> None:
    tables = _tables(conn)
    if "memories" not in tables:
        return  # fresh database: migration 001 has not even run
    changed = _memories(conn)
    for table, key, columns in (
        ("memory_history", "id", ("old_content", "new_content", "changes", "reason")),
        ("memory_hints", "rid", ("hint",)),
        ("session_checkpoints", "id", ("content",)),
        ("session_prompts", "id", ("prompt",)),
        ("session_transcripts", "session_key", ("transcript",)),
        ("documents", "id", ("raw_content", "title", "source_url", "error")),
    ):
        if table in tables:
            for column in columns:
                changed += _redact_column(conn, table, key, column)
    if "entity_attributes" in tables:
        for attr_id, content in conn.execute("SELECT id, content FROM entity_attributes").fetchall():
            clean = redact(content)
            if clean != content:
                conn.execute("UPDATE entity_attributes SET content = ?, normalized_content = ? WHERE id = ?",
                             (clean, clean.lower(), attr_id))
                changed += 1
    if "entities" in tables:
        for entity_id, name in conn.execute("SELECT id, name FROM entities").fetchall():
            if scan(name):
                conn.execute("DELETE FROM entities WHERE id = ?", (entity_id,))
                changed += 1
    if "session_transcripts" in tables:
        for key, text in conn.execute("SELECT session_key, transcript FROM session_transcripts"
                                      " WHERE transcript LIKE '%[REDACTED:%'").fetchall():
            conn.execute("UPDATE session_transcripts SET sha256 = ?, chars = ? WHERE session_key = ?",
                         (hashlib.sha256(text.encode("utf-8")).hexdigest(), len(text), key))
    if changed:
        for table in ("memories_fts", "memory_hints_fts"):
            if table in tables:
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
