"""The memories an agent rated, read from an index of the rated rows only.

Session start's standing-rule candidates (`store.ranking.standing_candidates`) keep a memory the
agent rated useful at least once (`agent_feedback_count > 0 AND agent_relevance_score >= ?`), and
`rating_history` reads those ratings. Most candidate rows are never rated, yet on PostgreSQL the
rated-memory test became a scan of every session_memories row at each session start (the planner
hashes the subquery's answer: 58 ms for 327k rows, growing with every session; issue 36). This
partial index holds the rated rows alone.
"""

from kenning.store.backend import Connection


def up(conn: Connection) -> None:
    conn.execute("CREATE INDEX IF NOT EXISTS idx_session_memories_rated"
                 " ON session_memories(memory_id, agent_relevance_score) WHERE agent_feedback_count > 0")
