"""m024 (PostgreSQL only): session start's two top-k queries walk an index in their own order.

Session start takes a project's 50 best memories by effective score (importance · 0.95^days
since last access, pinned first: `store.sessions.top_by_effective_score`) and its 50 standing
candidates (pinned, verified, importance, newest: `store.ranking.standing_candidates`). Both
sorted every live memory of the project: at a million memories (50k per project) 0.3-0.7 s
each, the most of session start's 645-804 ms p95 (issue 36). These partial indexes (live
memories) hold each query's order after the project, so each query reads its first rows and
stops. The effective-score key is `ln(importance) + ln(1/0.95) · julianday(last access)`: for a
fixed `at` the score is exp(key) times a constant, so the order is the same, and the key does not
depend on `at` (`store.pg.ddl.EFFECTIVE_KEY_PG`, which the query repeats).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.store.pg.db import PgConnection

from kenning.store.pg.ddl import EFFECTIVE_KEY_PG, LIVE


def up(conn: PgConnection) -> None:
    conn.raw.execute(
        f"CREATE INDEX IF NOT EXISTS idx_memories_effective_key ON memories (project, ({EFFECTIVE_KEY_PG.format(m='')})"
        f" DESC, rid DESC) WHERE {LIVE.format(m='')}")
    conn.raw.execute(
        "CREATE INDEX IF NOT EXISTS idx_memories_standing_order ON memories"
        f" (project, pinned DESC, user_verified DESC, importance DESC, rid DESC) WHERE {LIVE.format(m='')}")
