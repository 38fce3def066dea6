"""The embedding models a store holds, read from an index (`store.predictor.embedding_model_in_use`).

The predictor asked `SELECT model FROM embeddings GROUP BY model` at every session end and the
sidecar's start asked the same of `dims`: a full scan of the vectors table, 1.1 s and 4.1 s at a
million memories on PostgreSQL (issue 36). With (model, dims) indexed, the distinct models are a
few index probes (a loose scan: the next model after the last one) and a model's width is one.
"""

from kenning.store.backend import Connection


def up(conn: Connection) -> None:
    conn.execute("CREATE INDEX IF NOT EXISTS idx_embeddings_model_dims ON embeddings(model, dims)")
