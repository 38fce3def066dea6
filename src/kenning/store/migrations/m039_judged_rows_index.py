"""The judged candidate rows by time, for the drift signal (`store.predictor.relevance_by_memory_age`).

The drift signal compares the judge's relevance for young and old memories over the last 30 days'
sessions. It read every judged candidate row since then, joined with its memory: on PostgreSQL at a
million memories the planner hashed the whole memories table for it (1.2 s before each training
run, competing with the agents' session starts; issue 36). The query now reads the newest judged
rows only (a bounded sample) from this partial index, newest first, and looks each memory up by
its key.
"""

from kenning.store.backend import Connection


def up(conn: Connection) -> None:
    conn.execute("CREATE INDEX IF NOT EXISTS idx_session_memories_judged"
                 " ON session_memories(created_at) WHERE relevance_score IS NOT NULL")
