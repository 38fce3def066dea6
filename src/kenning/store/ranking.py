"""SQL behind what kenning shows unasked (kenning.sessions.ranking): evidence per memory, the
standing-rule candidates of a project, and the project's latest earlier session.

Evidence is read from what is already recorded: the memory's own flags (pinned, user_verified,
needs_review, confidence, metadata.reviewed_at) and the agent's per-session ratings
(session_memories.agent_relevance_score, a running mean per session, with the phase that showed
the memory: session_memories.inject_phase). Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Sized
from typing import TypedDict, cast

from kenning.core.types import Viewer
from kenning.store.backend import Connection, SqlValue, is_postgres
from kenning.store.sessions import _scope, project_then_global


def _marks(values: Sized) -> str:
    return ",".join("?" * len(values))


def rating_history(conn: Connection, memory_ids: list[str], before: str | None) -> dict[str, list[tuple[str, float, bool]]]:
    """{memory id: [(session started_at, the session's rating, shown at session start)]} oldest first,
    for sessions that started before `before` (all when None) and rated the memory. The third field
    says where the rated memory was shown in that session: True when session start showed it
    (inject_phase 'session-start'), False when a query found it (a prompt, a step, MCP)."""
    out: dict[str, list[tuple[str, float, bool]]] = {}
    ids = list(dict.fromkeys(memory_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        params: list[SqlValue] = list(chunk)
        sql = ("SELECT sm.memory_id, s.started_at, sm.agent_relevance_score, sm.inject_phase FROM session_memories sm"
               " JOIN sessions s ON s.session_key = sm.session_key"
               f" WHERE sm.memory_id IN ({_marks(chunk)}) AND sm.agent_feedback_count > 0"
               " AND sm.agent_relevance_score IS NOT NULL")
        if before is not None:
            sql += " AND s.started_at < ?"
            params.append(before)
        for row in conn.execute(sql + " ORDER BY s.started_at, s.session_key", params).fetchall():
            out.setdefault(row[0], []).append((row[1], float(row[2]), row[3] == "session-start"))
    return out


def standing_candidates(conn: Connection, *, project: str | None, at: str, viewer: Viewer | None, min_confidence: float,
                        useful_rating: float, raw_types: list[str], raw_sources: list[str],
                        limit: int) -> list[str]:
    """Ids of memories with evidence of their own (pinned, user-verified, rated useful at least
    once, or at least `min_confidence` and not waiting for review), raw kinds left out; the
    strongest evidence first, then importance, newest first."""
    if limit <= 0:
        return []
    types = list(raw_types) or [""]
    sources = list(raw_sources) or [""]
    rated = ("EXISTS (SELECT 1 FROM session_memories sm WHERE sm.memory_id = m.id"
             " AND sm.agent_feedback_count > 0 AND sm.agent_relevance_score >= ?)")
    if is_postgres(conn) and project is not None:  # m024's index, walked per project (project_then_global)
        return [r[0] for r in project_then_global(
            conn, "SELECT m.id, m.rid, m.pinned, m.user_verified, m.importance FROM memories m",
            "pinned DESC, user_verified DESC, importance DESC, rid DESC", project, at, viewer,
            [(f"m.type NOT IN ({_marks(types)})", list(types)),
             (f"COALESCE(m.source, '') NOT IN ({_marks(sources)})", list(sources)),
             (f"(m.pinned = 1 OR m.user_verified = 1 OR {rated} OR (m.confidence >= ? AND m.needs_review = 0))",
              [useful_rating, min_confidence])], limit)]
    where, params = _scope(project, at, viewer)
    rows = conn.execute(
        f"SELECT m.id FROM memories m WHERE {where} AND m.type NOT IN ({_marks(types)})"
        f" AND COALESCE(m.source, '') NOT IN ({_marks(sources)})"
        f" AND (m.pinned = 1 OR m.user_verified = 1 OR {rated} OR (m.confidence >= ? AND m.needs_review = 0))"
        " ORDER BY m.pinned DESC, m.user_verified DESC, m.importance DESC, m.rid DESC LIMIT ?",
        [*params, *types, *sources, useful_rating, min_confidence, limit],
    ).fetchall()
    return [r[0] for r in rows]


class WorkState(TypedDict):
    id: str
    content: str


class LatestSession(TypedDict):
    """The project's latest earlier session (sessions' columns), its first prompt, its latest task
    memory and the last 4,000 characters of its transcript."""

    session_key: str
    harness: str | None
    project: str | None
    context: str | None
    started_at: str
    ended_at: str | None
    prompt_count: int
    first_prompt: str | None
    work_state: WorkState | None
    transcript_tail: str | None


def latest_session(conn: Connection, *, project: str | None, before: str, exclude: str,
                   owner: str | None = None) -> LatestSession | None:
    """The project's latest session that started before `before` (not `exclude`; with `owner`, only
    that team-server user's sessions), with its first prompt (`first_prompt`) and the id/content of
    its latest task memory (`work_state`), if any."""
    sql = ("SELECT session_key, harness, project, context, started_at, ended_at, prompt_count FROM sessions"
           " WHERE project IS ? AND started_at < ? AND session_key != ?")
    params: list[SqlValue] = [project, before, exclude]
    if owner is not None:
        sql += " AND owner = ?"
        params.append(owner)
    row = conn.execute(sql + " ORDER BY started_at DESC, session_key DESC LIMIT 1", params).fetchone()
    if row is None:
        return None
    out = cast(LatestSession, dict(row))  # first_prompt, work_state, transcript_tail: set below
    prompt = conn.execute(
        "SELECT prompt FROM session_prompts WHERE session_key = ? ORDER BY idx LIMIT 1",
        (out["session_key"],),
    ).fetchone()
    out["first_prompt"] = prompt[0] if prompt else None
    task = conn.execute(
        "SELECT id, content FROM memories WHERE session_key = ? AND type = 'work_state' AND is_deleted = 0"
        " AND superseded_by IS NULL ORDER BY rid DESC LIMIT 1", (out["session_key"],),
    ).fetchone()
    out["work_state"] = WorkState(id=task["id"], content=task["content"]) if task else None
    transcript = conn.execute(
        "SELECT substr(transcript, CASE WHEN chars > 4000 THEN chars - 3999 ELSE 1 END) FROM session_transcripts"
        " WHERE session_key = ?", (out["session_key"],),
    ).fetchone()
    out["transcript_tail"] = transcript[0] if transcript else None
    return out


def rated_in_session(conn: Connection, session_key: str) -> dict[str, float]:
    """{memory id: the session's rating (running mean of the agent's ratings)} for the memories the
    agent rated in that session (the task in progress: what the latest session found useful)."""
    rows = conn.execute(
        "SELECT memory_id, agent_relevance_score FROM session_memories WHERE session_key = ?"
        " AND agent_feedback_count > 0 AND agent_relevance_score IS NOT NULL", (session_key,),
    ).fetchall()
    return {r[0]: float(r[1]) for r in rows}
