"""The candidate rows an FTS hit marked, in their own partial index, for the predictor's history.

The predictor's history features (`predictor.history.load_all`: each daemon after every session
end, the sidecar once per fit) read the candidate rows that carry a signal — an agent rating, an FTS
hit, a touch. The test was an OR over every session_memories row, a scan of all of them each time
(327k rows after ~1,900 sessions on the 1M team store; issue 36). `store.predictor.signal_events`
now reads the three kinds from their own indexes: the rated rows (m061), the FTS-hit rows (this
index), the touched rows (predictor_touched's key, joined by session_memories' unique key).
"""

from kenning.store.backend import Connection


def up(conn: Connection) -> None:
    conn.execute("CREATE INDEX IF NOT EXISTS idx_session_memories_fts_hits ON session_memories(id) WHERE fts_hit_count > 0")
