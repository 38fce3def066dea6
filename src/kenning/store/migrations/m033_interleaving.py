"""Team-draft interleaving (issue 32): the predictor is compared with the baseline on what each of
them put in front of the agent, not only on what the baseline chose to show.

session_memories.team: which ranking contributed an injected pick ('baseline' | 'predictor'; NULL
when the session was not interleaved). predictor_comparisons gains the interleaved list, the
per-item credit (memory id → team) and the credit each ranking earned from the session's ratings
and transcript use; `method` says how the row was decided ('ndcg' before this, 'interleave').
"""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
ALTER TABLE session_memories ADD COLUMN team TEXT;
ALTER TABLE predictor_comparisons ADD COLUMN method TEXT NOT NULL DEFAULT 'ndcg';
ALTER TABLE predictor_comparisons ADD COLUMN interleaved_ids TEXT NOT NULL DEFAULT '[]';
ALTER TABLE predictor_comparisons ADD COLUMN credit TEXT NOT NULL DEFAULT '{}';
ALTER TABLE predictor_comparisons ADD COLUMN predictor_credit REAL;
ALTER TABLE predictor_comparisons ADD COLUMN baseline_credit REAL;
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
