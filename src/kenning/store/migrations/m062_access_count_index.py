"""Live memories by access count, for the lifecycle's trust pass (`store.observer.trust_promote`).

The pass looks for memories accessed at least N times (confidence to raise, review to clear): few
of them, but without an index each daemon scanned every memory at its start and every lifecycle
interval — 1.2 s and 2.0 s at a million memories on PostgreSQL (issue 36). An access already
rewrites the memory's row and its effective-score index entry (m024); this adds one small entry.
"""

from kenning.store.backend import Connection


def up(conn: Connection) -> None:
    conn.execute("CREATE INDEX IF NOT EXISTS idx_memories_access ON memories(access_count) WHERE is_deleted = 0")
