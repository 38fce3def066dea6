"""m009 (PostgreSQL only): the embedding tracker's question — which live memories lack a vector
for the current model — answered from indexes (`store.retention._STALE_PG`): memories by the model
they name, and live memories newest-updated first. It scanned every memory against every vector
(~40 s per call at a million memories under load, two calls every 5 s per daemon; issue 36)."""

from kenning.store.pg.db import PgConnection


def up(conn: PgConnection) -> None:
    conn.raw.execute("CREATE INDEX IF NOT EXISTS idx_memories_embedding_model ON memories (embedding_model)"
                     " WHERE is_deleted = 0")
    conn.raw.execute("CREATE INDEX IF NOT EXISTS idx_memories_updated ON memories (updated_at DESC, rid DESC)"
                     " WHERE is_deleted = 0")
