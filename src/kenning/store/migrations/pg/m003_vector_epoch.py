"""m003 on Postgres: vectors are searched by pgvector (HNSW), not an in-process matrix, so no
deletion counter; `embeddings.vec` holds each vector as a pgvector value beside the float32 blob
(the HNSW index per dimension is created on first use, `store.pg.search.ensure_hnsw`).

`vec` is stored PLAIN (in the row, uncompressed): with the blob beside it a row passes the 2 kB
TOAST threshold, and a toasted `vec` cost a detoast per candidate — 10k × 384 KNN, k = 200:
16–36 ms toasted, 7–9 ms plain (the blob is toasted instead; KNN never reads it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.store.pg.db import PgConnection


def up(conn: PgConnection) -> None:
    conn.raw.execute("ALTER TABLE embeddings ADD COLUMN vec vector")
    conn.raw.execute("ALTER TABLE embeddings ALTER COLUMN vec SET STORAGE PLAIN")
