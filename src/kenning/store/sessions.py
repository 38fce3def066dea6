"""All SQL for the session lifecycle: sessions, candidates, prompts, checkpoints, transcripts, jobs, scores.

`session_memories.source` says which ranker put a session-start row where it is: 'effective'
(baseline only), 'predictor', 'both' or 'exploration' (the predictor's fuse); later rows are
'prompt' (injected by a prompt's recall) or 'fts_only' (an FTS match at a prompt that the
pre-filter missed). `prefilter_source` says which pre-filter leg found a candidate:
'effective' (effective_score top-k), 'similarity' (context embedding top-k) or 'both'.
Functions take a connection: a write connection from `db.with_write_tx()` for changes, any
reader for queries. Nothing here calls a model or the network.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import TypedDict, cast

import numpy as np

from kenning.core.secrets import redact
from kenning.core.types import Memory, Viewer
from kenning.store import jobs
from kenning.store.backend import Connection, Row, inserted_id, is_postgres
from kenning.store.memories import row_to_memory, visibility_sql
from kenning.store.pg.ddl import EFFECTIVE_KEY_PG, LIVE
from kenning.store.vectors import knn

_LIVE = LIVE.format(m="m.")


# Session rows stay dicts (the sessions engine, the API and tests read them by column): TypedDicts
# name their columns. Checkpoints and transcripts are frozen dataclasses.


class _SessionBasics(TypedDict):
    session_key: str
    harness: str | None
    project: str | None
    cwd: str | None
    started_at: str
    ended_at: str | None
    status: str
    prompt_count: int


class SessionRow(_SessionBasics):
    """A session (sessions table; `metadata` decoded)."""

    last_checkpoint_at: str | None
    context: str | None
    status_line: str | None
    last_prompt_at: str | None
    prompts_since_checkpoint: int
    metadata: dict[str, object]
    transcript_path: str | None
    owner: str | None


class StaleSession(TypedDict):
    session_key: str
    transcript_path: str
    last_at: str


class SessionListItem(_SessionBasics):
    """A session as listed, with its continuity score and candidate counts."""

    score: float | None
    confidence: float | None
    judge: str | None
    candidates: int
    injected: int


class CandidateRecord(TypedDict, total=False):
    """One candidate as session start / a prompt records it (insert_candidates)."""

    memory_id: str
    source: str
    prefilter_source: str | None
    effective_score: float | None
    similarity: float | None
    predictor_score: float | None
    baseline_rank: int | None
    predictor_rank: int | None
    final_score: float
    rank: int
    diversity_factor: float | None
    was_injected: bool | int
    inject_phase: str | None
    fts_hit_count: int
    team: str | None  # interleaving: the ranking that contributed this pick (predictor.interleave)


class SessionMemoryRecord(TypedDict):
    """A session_memories row: one candidate a session considered."""

    id: str
    session_key: str
    memory_id: str
    source: str
    effective_score: float | None
    predictor_score: float | None
    baseline_rank: int | None
    predictor_rank: int | None
    final_score: float
    rank: int
    was_injected: int
    relevance_score: float | None
    fts_hit_count: int
    agent_preference: str | None
    agent_relevance_score: float | None
    agent_feedback_count: int
    created_at: str
    injected_at: str | None
    inject_phase: str | None
    prefilter_source: str | None
    similarity: float | None
    diversity_factor: float | None
    team: str | None  # interleaving: the ranking that contributed this injected pick (m033)


class SessionMemoryRow(SessionMemoryRecord):
    """A recorded candidate (session_memories) with its memory's content, type, importance, project."""

    content: str | None
    type: str | None
    importance: float | None
    memory_project: str | None


class CreatedMemory(TypedDict):
    id: str
    type: str
    source: str | None
    content: str
    importance: float
    created_at: str
    superseded_by: str | None
    is_deleted: int


class SessionPrompt(TypedDict):
    idx: int
    prompt: str
    fts_hits: int
    injected: list[str]
    created_at: str


class SummaryJobView(TypedDict):
    """A session's summary job in the shape the API has always returned."""

    id: int
    session_key: str
    status: str  # pending | running | done | failed
    attempts: int
    error: str | None
    result: object
    created_at: str
    updated_at: str
    completed_at: str | None
    job_status: str
    run_after: str | None
    failed_at: str | None


class _ContinuityFigures(TypedDict):
    """The continuity judge's figures for one session (session_scores' columns)."""

    project: str | None
    score: float
    confidence: float
    memories_recalled: int
    memories_used: int
    novel_context_count: int
    missing_topics: list[str]
    judge: str


class ContinuityVerdict(_ContinuityFigures):
    """What the continuity judge wrote (upsert_session_score)."""

    reasoning: str | None


class SessionScoreRow(_ContinuityFigures):
    session_key: str
    continuity_reasoning: str | None
    created_at: str


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A session checkpoint (session_checkpoints): what the session was doing at `created_at`."""

    id: int
    trigger: str
    content: str
    created_at: str


@dataclass(frozen=True, slots=True)
class Transcript:
    """A session's stored transcript (session_transcripts), exactly as the harness gave it."""

    session_key: str
    transcript: str
    sha256: str
    chars: int
    created_at: str


def _new_id() -> str:
    return uuid.uuid4().hex[:16]


def _scope(project: str | None, at: str | None, viewer: Viewer | None = None) -> tuple[str, list[object]]:
    """Memories visible to a session: its project's and global ones, created before `at`, that
    the session's user may see (teams)."""
    visible, params = visibility_sql(viewer)
    clauses = [_LIVE, visible]
    if project is not None:
        clauses.append("(m.project IS NULL OR m.project = ?)")
        params.append(project)
    if at is not None:
        clauses.append("m.created_at <= ?")
        params.append(at)
    return " AND ".join(clauses), params


# -- candidate queries (read) --------------------------------------------------------------
def project_then_global(conn: Connection, select: str, order: str, project: str, at: str | None,
                        viewer: Viewer | None, conditions: list[tuple[str, list[object]]], limit: int) -> list[Row]:
    """The first `limit` rows of `select` (over `memories m`) in `order` among the memories in the
    session's scope (`_scope`) that meet `conditions`: on PostgreSQL, one ordered index walk for the
    project's memories and one for the global ones (project IS NULL), merged — `project = ? OR
    project IS NULL` would make the server sort every memory of the project (m024's indexes)."""
    visible, params = visibility_sql(viewer)
    clauses = [_LIVE, visible, *(c for c, _ in conditions)]
    for _, extra in conditions:
        params = [*params, *extra]
    if at is not None:
        clauses.append("m.created_at <= ?")
        params = [*params, at]
    where = " AND ".join(clauses)
    own, shared = (f"SELECT * FROM ({select} WHERE {p} AND {where} ORDER BY {order} LIMIT ?) AS {alias}"
                   for p, alias in (("m.project = ?", "own"), ("m.project IS NULL", "shared")))
    return conn.execute(f"{own} UNION ALL {shared} ORDER BY {order} LIMIT ?",
                        [project, *params, limit, *params, limit, limit]).fetchall()


def top_by_effective_score(conn: Connection, *, project: str | None, at: str, limit: int,
                           viewer: Viewer | None = None) -> list[str]:
    """Ids of the `limit` best memories by effective_score at `at`, computed in SQL.

    Same formula as `retrieval.scoring.effective_score` (importance · 0.95^days since last
    access, pinned = 1); callers re-score the returned rows with that function.
    """
    if is_postgres(conn) and project is not None:
        key = EFFECTIVE_KEY_PG.format(m="m.")
        return [r[0] for r in project_then_global(conn, f"SELECT m.id, m.rid, {key} AS k FROM memories m",
                                                  "k DESC, rid DESC", project, at, viewer, [], limit)]
    where, params = _scope(project, at, viewer)
    rows = conn.execute(
        "SELECT m.id FROM memories m WHERE " + where + " ORDER BY CASE WHEN m.pinned = 1 THEN 1.0"
        " ELSE m.importance * pow(0.95, max(0.0, julianday(?) - julianday(COALESCE(m.last_accessed_at,"
        " m.created_at)))) END DESC, m.rid DESC LIMIT ?",
        [*params, at, limit],
    ).fetchall()
    return [r[0] for r in rows]


def top_by_similarity(
    conn: Connection, vector: np.ndarray, model: str, *, project: str | None, at: str | None, limit: int,
    viewer: Viewer | None = None,
) -> list[tuple[str, float]]:
    """(memory id, cosine) of the memories nearest to `vector`, honouring the session scope."""
    if limit <= 0:
        return []
    if is_postgres(conn):  # the HNSW scan feeds the scope filter until `limit` pass (store.pg.search)
        from kenning.store.pg.search import vector_search
        from kenning.store.pg.narrow import as_pg

        where, params = _scope(project, at, viewer)
        return vector_search(as_pg(conn), vector, model, where, params, limit)
    hits = knn(conn, vector, model, max(limit * 4, 200))
    if not hits:
        return []
    similarity = dict(hits)
    where, params = _scope(project, at, viewer)
    marks = ",".join("?" * len(similarity))
    rows = conn.execute(
        f"SELECT m.id, m.content_hash FROM memories m WHERE m.content_hash IN ({marks}) AND {where}",
        [*similarity, *params],
    ).fetchall()
    ranked = sorted(((r[0], similarity[r[1]]) for r in rows), key=lambda x: (-x[1], x[0]))
    return ranked[:limit]


# -- sessions --------------------------------------------------------------------------------
def get_session(conn: Connection, session_key: str) -> SessionRow | None:
    row = conn.execute("SELECT * FROM sessions WHERE session_key = ?", (session_key,)).fetchone()
    if row is None:
        return None
    data = dict(row)
    data["metadata"] = json.loads(data.get("metadata") or "{}")
    return cast(SessionRow, data)


def create_session(
    conn: Connection, session_key: str, *, harness: str | None, project: str | None, cwd: str | None,
    context: str | None, started_at: str,
) -> bool:
    """Insert the session row; False when it already existed (session-start is idempotent). An existing
    row made by an event that came first knowing less (a prompt or session end: no harness, project or
    cwd) gets what this call knows of them: Copilot CLI runs its sessionStart and userPromptSubmitted
    hooks at once, and the prompt often reaches the daemon first."""
    if conn.execute("SELECT 1 FROM sessions WHERE session_key = ?", (session_key,)).fetchone() is not None:
        conn.execute(
            "UPDATE sessions SET harness = COALESCE(harness, ?), project = COALESCE(project, ?), cwd = COALESCE(cwd, ?)"
            " WHERE session_key = ?", (harness, project, cwd, session_key),
        )
        return False
    cur = conn.execute(
        "INSERT INTO sessions(session_key, harness, project, cwd, context, started_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(session_key) DO NOTHING",
        (session_key, harness, project, cwd, redact(context) if context else context, started_at),  # user text
    )
    return cur.rowcount > 0


def note_start(conn: Connection, session_key: str, source: str) -> None:
    """Record one session start's `source` (startup | resume | clear | compact …, as the harness says) in the
    session's metadata: `source` how it began (its first start), `last_source` the latest start's, `starts`
    how many starts it had (a resumed or compacted session starts again under the same key)."""
    row = conn.execute("SELECT metadata FROM sessions WHERE session_key = ?", (session_key,)).fetchone()
    if row is None:
        return
    meta = json.loads(row[0] or "{}")
    starts = meta.get("starts")
    meta.setdefault("source", source)
    meta["last_source"] = source
    meta["starts"] = (starts if isinstance(starts, int) else 0) + 1
    conn.execute("UPDATE sessions SET metadata = ? WHERE session_key = ?", (json.dumps(meta), session_key))


def set_status_line(conn: Connection, session_key: str, status_line: str) -> None:
    conn.execute("UPDATE sessions SET status_line = ? WHERE session_key = ?", (status_line, session_key))


def note_prompt(conn: Connection, session_key: str, at: str) -> SessionRow | dict[str, object]:
    """Count one prompt; returns the updated session row."""
    conn.execute(
        "UPDATE sessions SET prompt_count = prompt_count + 1, last_prompt_at = ?,"
        " prompts_since_checkpoint = prompts_since_checkpoint + 1 WHERE session_key = ?",
        (at, session_key),
    )
    return get_session(conn, session_key) or {}


def end_session(conn: Connection, session_key: str, at: str) -> None:
    conn.execute(
        "UPDATE sessions SET ended_at = ?, status = 'ended' WHERE session_key = ?", (at, session_key)
    )


def set_transcript_path(conn: Connection, session_key: str, path: str) -> None:
    """Where the harness keeps this session's transcript (kept only to end a stale session from it)."""
    conn.execute("UPDATE sessions SET transcript_path = ? WHERE session_key = ?", (path, session_key))


def stale_sessions(conn: Connection, *, idle_before: str, limit: int = 50,
                   harnesses: list[str] | None = None) -> list[StaleSession]:
    """Sessions still `active` whose last prompt (or start) is older than `idle_before` and
    that know their transcript's path, oldest first; only those of `harnesses` when given."""
    only = f" AND harness IN ({', '.join('?' for _ in harnesses)})" if harnesses else ""
    rows = conn.execute(
        "SELECT session_key, transcript_path, COALESCE(last_prompt_at, started_at) AS last_at FROM sessions"
        " WHERE status = 'active' AND transcript_path IS NOT NULL AND COALESCE(last_prompt_at, started_at) < ?"
        + only + " ORDER BY COALESCE(last_prompt_at, started_at) LIMIT ?",
        (idle_before, *(harnesses or []), limit),
    ).fetchall()
    return [cast(StaleSession, dict(r)) for r in rows]


def claim_owner(conn: Connection, session_key: str, owner: str) -> str | None:
    """Make `owner` the session's owner unless it has one; returns the owner it has now (None:
    no such session)."""
    conn.execute("UPDATE sessions SET owner = ? WHERE session_key = ? AND owner IS NULL", (owner, session_key))
    row = conn.execute("SELECT owner FROM sessions WHERE session_key = ?", (session_key,)).fetchone()
    return row[0] if row else None


def session_owner(conn: Connection, session_key: str) -> tuple[bool, str | None]:
    """(the session exists, its owner)."""
    row = conn.execute("SELECT owner FROM sessions WHERE session_key = ?", (session_key,)).fetchone()
    return (row is not None, row[0] if row else None)


def spool_replayed(conn: Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM spool_replayed WHERE name = ?", (name,)).fetchone() is not None


def mark_spool_replayed(conn: Connection, name: str, at: str) -> None:
    conn.execute("INSERT INTO spool_replayed(name, replayed_at) VALUES (?, ?) ON CONFLICT(name) DO NOTHING",
                 (name, at))


def prompt_recorded_at(conn: Connection, session_key: str, at: str) -> bool:
    """Whether the session already has a prompt stamped `at` (a replayed prompt is not added twice)."""
    return conn.execute("SELECT 1 FROM session_prompts WHERE session_key = ? AND created_at = ?",
                        (session_key, at)).fetchone() is not None


def list_sessions(
    conn: Connection, *, limit: int = 50, offset: int = 0, project: str | None = None
) -> tuple[list[SessionListItem], int]:
    where, params = ("s.project = ?", [project]) if project is not None else ("1 = 1", [])
    total = conn.execute(f"SELECT COUNT(*) FROM sessions s WHERE {where}", params).fetchone()[0]
    rows = conn.execute(
        "SELECT s.session_key, s.harness, s.project, s.cwd, s.started_at, s.ended_at, s.status,"
        " s.prompt_count, sc.score, sc.confidence, sc.judge,"
        " (SELECT COUNT(*) FROM session_memories sm WHERE sm.session_key = s.session_key) AS candidates,"
        " (SELECT COUNT(*) FROM session_memories sm WHERE sm.session_key = s.session_key"
        "   AND sm.was_injected = 1) AS injected"
        f" FROM sessions s LEFT JOIN session_scores sc ON sc.session_key = s.session_key WHERE {where}"
        " ORDER BY s.started_at DESC, s.session_key LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    return [cast(SessionListItem, dict(r)) for r in rows], total


def scored_session_count(conn: Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM session_scores").fetchone()[0])


# -- session_memories --------------------------------------------------------------------------
_CANDIDATES_PER_INSERT = 40  # 19 values each: well under SQLite's variable limit


def insert_candidates(conn: Connection, session_key: str, rows: list[CandidateRecord], at: str) -> int:
    """Record candidates; a (session, memory) pair already present is left alone (idempotent).
    One multi-row INSERT per 40 candidates: session start records ~100, and one statement each
    cost ~100 round trips to a PostgreSQL server (issue 36)."""
    values = [(
        _new_id(), session_key, row["memory_id"], row["source"], row.get("prefilter_source"),
        row.get("effective_score"), row.get("similarity"), row.get("predictor_score"),
        row.get("baseline_rank"), row.get("predictor_rank"), row["final_score"], row["rank"],
        row.get("diversity_factor"), int(bool(row.get("was_injected"))),
        at if row.get("was_injected") else None, row.get("inject_phase"),
        int(row.get("fts_hit_count", 0)), row.get("team"), at,
    ) for row in rows]
    inserted = 0
    for start in range(0, len(values), _CANDIDATES_PER_INSERT):
        chunk = values[start:start + _CANDIDATES_PER_INSERT]
        cur = conn.execute(
            "INSERT INTO session_memories(id, session_key, memory_id, source, prefilter_source,"
            " effective_score, similarity, predictor_score, baseline_rank, predictor_rank, final_score,"
            " rank, diversity_factor, was_injected, injected_at, inject_phase, fts_hit_count, team, created_at)"
            " VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(chunk))
            + " ON CONFLICT(session_key, memory_id) DO NOTHING",
            [value for row in chunk for value in row],
        )
        inserted += cur.rowcount
    return inserted


def session_memories(conn: Connection, session_key: str) -> list[SessionMemoryRow]:
    rows = conn.execute(
        "SELECT sm.*, m.content, m.type, m.importance, m.project AS memory_project"
        " FROM session_memories sm LEFT JOIN memories m ON m.id = sm.memory_id"
        " WHERE sm.session_key = ? ORDER BY sm.was_injected DESC, sm.rank, sm.created_at",
        (session_key,),
    ).fetchall()
    return [cast(SessionMemoryRow, dict(r)) for r in rows]


def episode_ids(conn: Connection, session_key: str) -> dict[int, str]:
    """position → memory id of the episodes already stored for a session (deleted ones count too)."""
    rows = conn.execute(
        "SELECT json_extract(metadata, '$.episode_position'), id FROM memories"
        " WHERE session_key = ? AND type = 'episode' AND source = 'session-episode'",
        (session_key,),
    ).fetchall()
    return {int(r[0]): r[1] for r in rows if r[0] is not None}


def live_rules(conn: Connection, project: str | None, exclude_session: str, types: list[str]) -> list[Memory]:
    """The project's live memories of `types` (decisions, rules) not recorded by `exclude_session`."""
    marks = ",".join("?" * len(types))
    rows = conn.execute(
        f"SELECT * FROM memories m WHERE {_LIVE} AND m.project IS ? AND m.type IN ({marks})"
        " AND (m.session_key IS NULL OR m.session_key != ?)",
        [project, *types, exclude_session],
    ).fetchall()
    return [row_to_memory(r) for r in rows]


def stale_companions(conn: Connection, old: Memory) -> list[Memory]:
    """The live memories recorded with a superseded rule: its session's, or its sources."""
    if old.session_key:
        rows = conn.execute(f"SELECT * FROM memories m WHERE {_LIVE} AND m.session_key = ?",
                            (old.session_key,)).fetchall()
    else:
        marks = ",".join("?" * len(old.derived_from))
        rows = conn.execute(f"SELECT * FROM memories m WHERE {_LIVE} AND m.id IN ({marks})",
                            old.derived_from).fetchall() if old.derived_from else []
    return [row_to_memory(r) for r in rows]


def created_memories(conn: Connection, session_key: str) -> list[CreatedMemory]:
    """The memories a session created (episodes and what was extracted from it), oldest first."""
    rows = conn.execute(
        "SELECT id, type, source, content, importance, created_at, superseded_by, is_deleted"
        " FROM memories WHERE session_key = ? ORDER BY created_at, rid",
        (session_key,),
    ).fetchall()
    return [cast(CreatedMemory, dict(r)) for r in rows]


def session_memory_state(conn: Connection, session_key: str) -> dict[str, bool]:
    """memory_id → was_injected, for every row of the session."""
    return {
        r[0]: bool(r[1]) for r in conn.execute(
            "SELECT memory_id, was_injected FROM session_memories WHERE session_key = ?", (session_key,)
        )
    }


def max_rank(conn: Connection, session_key: str) -> int:
    row = conn.execute(
        "SELECT COALESCE(MAX(rank), 0) FROM session_memories WHERE session_key = ?", (session_key,)
    ).fetchone()
    return int(row[0])


def unmark_injected(conn: Connection, session_key: str, memory_ids: list[str]) -> None:
    """These rows were chosen but never shown (a replayed hook's answer reached no agent): candidates only."""
    conn.executemany(
        "UPDATE session_memories SET was_injected = 0, injected_at = NULL, inject_phase = NULL"
        " WHERE session_key = ? AND memory_id = ?", [(session_key, mid) for mid in memory_ids],
    )


def mark_injected(conn: Connection, session_key: str, memory_ids: list[str], at: str, phase: str) -> None:
    conn.executemany(
        "UPDATE session_memories SET was_injected = 1, injected_at = COALESCE(injected_at, ?),"
        " inject_phase = COALESCE(inject_phase, ?) WHERE session_key = ? AND memory_id = ?",
        [(at, phase, session_key, mid) for mid in memory_ids],
    )


def set_teams(conn: Connection, session_key: str, teams: dict[str, str]) -> None:
    """Which ranking contributed each interleaved pick (a prompt's draft over rows already recorded);
    a row that has a team keeps it (its first draft counts)."""
    conn.executemany(
        "UPDATE session_memories SET team = COALESCE(team, ?) WHERE session_key = ? AND memory_id = ?",
        [(team, session_key, mid) for mid, team in teams.items()],
    )


def increment_fts_hits(conn: Connection, session_key: str, memory_ids: list[str]) -> None:
    conn.executemany(
        "UPDATE session_memories SET fts_hit_count = fts_hit_count + 1"
        " WHERE session_key = ? AND memory_id = ?",
        [(session_key, mid) for mid in memory_ids],
    )


def apply_feedback(conn: Connection, session_key: str, scores: dict[str, float], *, shown_only: bool = False) -> list[str]:
    """Fold scores into the running mean of agent_relevance_score; returns the ids applied.

    Ids without a row in this session are ignored (the agent only rates what it was given);
    with `shown_only`, so are rows that were candidates but never injected.
    """
    applied = []
    for memory_id, score in scores.items():
        cur = conn.execute(
            "UPDATE session_memories SET"
            " agent_relevance_score = (COALESCE(agent_relevance_score, 0) * agent_feedback_count + ?)"
            "   / (agent_feedback_count + 1),"
            " agent_feedback_count = agent_feedback_count + 1"
            " WHERE session_key = ? AND memory_id = ?" + (" AND was_injected = 1" if shown_only else ""),
            (float(score), session_key, memory_id),
        )
        if cur.rowcount:
            applied.append(memory_id)
    return applied


def latest_session_offering(conn: Connection, memory_ids: list[str], *, owner: str | None = None) -> str | None:
    """The session a rating without a session key belongs to: among sessions that were offered
    any of `memory_ids` (with `owner`: that user's sessions that showed them), open ones first,
    then the one most recently active."""
    if not memory_ids:
        return None
    marks = ",".join("?" * len(memory_ids))
    mine = " AND s.owner = ?" if owner is not None else ""
    shown = " AND was_injected = 1" if owner is not None else ""
    row = conn.execute(
        "SELECT s.session_key FROM sessions s WHERE s.session_key IN"
        f" (SELECT session_key FROM session_memories WHERE memory_id IN ({marks}){shown}){mine}"
        " ORDER BY (s.ended_at IS NULL) DESC, COALESCE(s.last_prompt_at, s.started_at) DESC LIMIT 1",
        [*memory_ids, *([owner] if owner is not None else [])],
    ).fetchone()
    return row[0] if row else None


def set_relevance_scores(conn: Connection, session_key: str, scores: dict[str, float]) -> None:
    conn.executemany(
        "UPDATE session_memories SET relevance_score = ? WHERE session_key = ? AND memory_id = ?",
        [(float(v), session_key, k) for k, v in scores.items()],
    )


# -- prompts ----------------------------------------------------------------------------------
def add_prompt(
    conn: Connection, session_key: str, idx: int, prompt: str, *, fts_hits: int, injected: list[str], at: str
) -> None:
    conn.execute(
        "INSERT INTO session_prompts(session_key, idx, prompt, fts_hits, injected, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (session_key, idx, prompt, fts_hits, json.dumps(injected), at),
    )


def session_prompts(conn: Connection, session_key: str) -> list[SessionPrompt]:
    rows = conn.execute(
        "SELECT idx, prompt, fts_hits, injected, created_at FROM session_prompts"
        " WHERE session_key = ? ORDER BY idx", (session_key,),
    ).fetchall()
    return [cast(SessionPrompt, dict(r, injected=json.loads(r["injected"]))) for r in rows]


# -- checkpoints ------------------------------------------------------------------------------
def add_checkpoint(
    conn: Connection, session_key: str, trigger: str, content: str, at: str, *, max_per_session: int,
    purge_before: str | None,
) -> int:
    cur = conn.execute(
        "INSERT INTO session_checkpoints(session_key, trigger, content, created_at) VALUES (?, ?, ?, ?)",
        (session_key, trigger, content, at),
    )
    conn.execute(
        "UPDATE sessions SET last_checkpoint_at = ?, prompts_since_checkpoint = 0 WHERE session_key = ?",
        (at, session_key),
    )
    conn.execute(
        "DELETE FROM session_checkpoints WHERE session_key = ? AND id NOT IN ("
        " SELECT id FROM session_checkpoints WHERE session_key = ? ORDER BY created_at DESC, id DESC LIMIT ?)",
        (session_key, session_key, max_per_session),
    )
    if purge_before is not None:
        conn.execute("DELETE FROM session_checkpoints WHERE created_at < ?", (purge_before,))
    return inserted_id(cur)


def checkpoints(conn: Connection, session_key: str) -> list[Checkpoint]:
    rows = conn.execute(
        "SELECT id, trigger, content, created_at FROM session_checkpoints WHERE session_key = ?"
        " ORDER BY created_at, id", (session_key,),
    ).fetchall()
    return [Checkpoint(r["id"], r["trigger"], r["content"], r["created_at"]) for r in rows]


def latest_checkpoint(conn: Connection, *, project: str | None, before: str) -> Checkpoint | None:
    row = conn.execute(
        "SELECT c.id, c.trigger, c.content, c.created_at FROM session_checkpoints c"
        " JOIN sessions s ON s.session_key = c.session_key"
        " WHERE s.project IS ? AND c.created_at <= ? ORDER BY c.created_at DESC, c.id DESC LIMIT 1",
        (project, before),
    ).fetchone()
    return Checkpoint(row["id"], row["trigger"], row["content"], row["created_at"]) if row else None


# -- transcripts -------------------------------------------------------------------------------
def save_transcript(conn: Connection, session_key: str, transcript: str, at: str) -> str:
    """Store the transcript exactly as given (a later, longer one replaces it); returns sha256."""
    digest = hashlib.sha256(transcript.encode("utf-8", "surrogatepass")).hexdigest()
    conn.execute(
        "INSERT INTO session_transcripts(session_key, transcript, sha256, chars, created_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT(session_key) DO UPDATE SET transcript = excluded.transcript,"
        " sha256 = excluded.sha256, chars = excluded.chars, created_at = excluded.created_at",
        (session_key, transcript, digest, len(transcript), at),
    )
    return digest


def get_transcript(conn: Connection, session_key: str) -> Transcript | None:
    row = conn.execute(
        "SELECT session_key, transcript, sha256, chars, created_at FROM session_transcripts WHERE session_key = ?",
        (session_key,),
    ).fetchone()
    return Transcript(row["session_key"], row["transcript"], row["sha256"], row["chars"], row["created_at"]) if row else None


# -- summary jobs (in memory_jobs, one live job per session) -------------------------------------
SUMMARY_JOB = "session_summary"
_SUMMARY_STATUS = {"pending": "pending", "leased": "running", "completed": "done", "dead": "failed"}


def enqueue_summary_job(conn: Connection, session_key: str) -> int:
    """Queue the session's summary job in memory_jobs (its live job when one is pending or
    running: enqueue is idempotent per session); returns the job id."""
    job_id, _ = jobs.enqueue_in_tx(conn, SUMMARY_JOB, dedup_key=session_key, payload={"session_key": session_key})
    return job_id


def lease_summary_job(conn: Connection, session_key: str, worker_id: str) -> jobs.Job | None:
    """Lease this session's pending summary job now (a synchronous session-end runs it itself)."""
    return jobs.lease_key_in_tx(conn, SUMMARY_JOB, session_key, worker_id)


def get_summary_job(conn: Connection, session_key: str) -> SummaryJobView | None:
    """The session's newest summary job in the shape the API has always returned (status
    pending | running | done | failed), with the queue's own status beside it."""
    job = jobs.latest_for_key(conn, SUMMARY_JOB, session_key)
    if job is None:
        return None
    return {
        "id": job.id, "session_key": session_key, "status": _SUMMARY_STATUS[job.status],
        "attempts": job.attempts, "error": job.last_error, "result": job.result,
        "created_at": job.created_at, "updated_at": job.updated_at,
        "completed_at": job.completed_at if job.status == "completed" else None,
        "job_status": job.status, "run_after": job.run_after,
        "failed_at": job.failed_at,
    }


# -- session scores --------------------------------------------------------------------------
def upsert_session_score(conn: Connection, session_key: str, score: ContinuityVerdict, at: str) -> None:
    conn.execute(
        "INSERT INTO session_scores(session_key, project, score, confidence, memories_recalled, memories_used,"
        " novel_context_count, missing_topics, continuity_reasoning, judge, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(session_key) DO UPDATE SET"
        " score = excluded.score, confidence = excluded.confidence, memories_recalled = excluded.memories_recalled,"
        " memories_used = excluded.memories_used, novel_context_count = excluded.novel_context_count,"
        " missing_topics = excluded.missing_topics, continuity_reasoning = excluded.continuity_reasoning,"
        " judge = excluded.judge, created_at = excluded.created_at",
        (
            session_key, score.get("project"), float(score["score"]), float(score["confidence"]),
            int(score.get("memories_recalled", 0)), int(score.get("memories_used", 0)),
            int(score.get("novel_context_count", 0)), json.dumps(score.get("missing_topics", [])),
            score.get("reasoning"), score.get("judge", "heuristic"), at,
        ),
    )


def get_session_score(conn: Connection, session_key: str) -> SessionScoreRow | None:
    row = conn.execute("SELECT * FROM session_scores WHERE session_key = ?", (session_key,)).fetchone()
    if row is None:
        return None
    data = dict(row)
    data["missing_topics"] = json.loads(data["missing_topics"] or "[]")
    return cast(SessionScoreRow, data)
