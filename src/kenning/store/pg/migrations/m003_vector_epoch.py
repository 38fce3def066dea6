"""m003 on Postgres: vectors are searched by pgvector (HNSW), not an in-process matrix, so no
deletion counter; `embeddings.vec` holds each vector as a pgvector value beside the float32 blob
(the HNSW index per dimension is created on first use, `store.pg.search.ensure_hnsw`)."""


def up(conn) -> None:
    conn.raw.execute("ALTER TABLE embeddings ADD COLUMN vec vector")
