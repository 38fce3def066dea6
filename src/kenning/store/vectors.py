"""Embeddings keyed by content hash + model; KNN through the in-memory `VectorIndex`.

Vectors are stored once per (content_hash, model) in `embeddings` (float32 blobs); every
process searches them through `vector_index`, which keeps a matrix copy fresh from this table.
That module loads on the first search, so processes that never search — CLI `list`, `show`,
`stats`, … — start in well under a second.
"""

from __future__ import annotations

import numpy as np

from kenning.core.clock import now_iso
from kenning.store.backend import Connection, inserted_id, is_postgres


def to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


def upsert_embedding(conn: Connection, content_hash: str, model: str, vector: np.ndarray) -> int:
    """Store a vector for (content_hash, model) once; return its embeddings rowid."""
    if is_postgres(conn):  # one round trip: INSERT ... ON CONFLICT DO NOTHING RETURNING
        from kenning.store.pg.search import upsert_embedding as pg_upsert
        from kenning.store.pg.narrow import as_pg

        return pg_upsert(as_pg(conn), content_hash, model, vector, now_iso())
    row = conn.execute(
        "SELECT rid FROM embeddings WHERE content_hash = ? AND model = ?", (content_hash, model)
    ).fetchone()
    if row:
        return int(row[0])
    dims = int(np.asarray(vector).shape[-1])
    blob = to_blob(vector)
    cur = conn.execute(
        "INSERT INTO embeddings(content_hash, model, dims, vector, created_at) VALUES (?, ?, ?, ?, ?)",
        (content_hash, model, dims, blob, now_iso()),
    )
    return inserted_id(cur)


def delete_embedding(conn: Connection, content_hash: str, model: str | None = None) -> int:
    return conn.execute(
        "DELETE FROM embeddings WHERE content_hash = ? AND (? IS NULL OR model = ?)",
        (content_hash, model, model),
    ).rowcount


def get_embeddings(conn: Connection, hashes: list[str], model: str) -> dict[str, np.ndarray]:
    found: dict[str, np.ndarray] = {}
    for start in range(0, len(hashes), 500):
        chunk = hashes[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for content_hash, blob in conn.execute(
            f"SELECT content_hash, vector FROM embeddings WHERE model = ? AND content_hash IN ({marks})",
            [model, *chunk],
        ):
            found[content_hash] = from_blob(blob)
    return found


def missing_embeddings(conn: Connection, model: str, limit: int = 1000) -> list[tuple[str, str]]:
    """(content_hash, content) of live memories without a vector for `model`."""
    return [tuple(r) for r in conn.execute(
        "SELECT m.content_hash, MIN(m.content) FROM memories m"
        " LEFT JOIN embeddings e ON e.content_hash = m.content_hash AND e.model = ?"
        " WHERE m.is_deleted = 0 AND e.rid IS NULL GROUP BY m.content_hash LIMIT ?",
        (model, limit),
    )]


def knn(conn: Connection, vector: np.ndarray, model: str, k: int) -> list[tuple[str, float]]:
    """Nearest content hashes for `model` as (content_hash, cosine similarity), best first."""
    if is_postgres(conn):
        from kenning.store.pg.search import knn as pg_knn
        from kenning.store.pg.narrow import as_pg

        return pg_knn(as_pg(conn), vector, model, k)
    from kenning.store.vector_index import index_for  # deferred: loads with the first search

    return index_for(conn, model).search(conn, vector, k)
