"""SQL for review (issue 22): what kenning learned by itself, with the session it came from,
and how each extraction rule fares with the user.

A learned memory is one kenning wrote itself: it carries the claim test's evidence
(`metadata.claim`), or its source is one of the writers' (`LEARNED_SOURCES`). Its review state is
`metadata.review.status` (accepted | rejected | edited) and `needs_review` (pending while 1 and
not rejected). A rule whose code was deleted or renamed (`stale_at`, issue 31) counts as learned, whoever
wrote it, and is pending until the user confirms (accept), edits or retires (reject) it; `stale` lists those.
Nothing here writes: the review actions go through the write path (service.edit).
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from kenning.core.types import Memory, Viewer
from kenning.core.written import kind_of
from kenning.store.backend import Connection
from kenning.store.memories import row_to_memory, visibility_sql

LEARNED_SOURCES = ("session-summary", "pipeline-v2:extracted-fact", "observer")
STATUSES = ("pending", "accepted", "rejected", "learned", "stale")
_REVIEW = "json_extract(m.metadata, '$.review.status')"
_RULE = "COALESCE(json_extract(m.metadata, '$.claim.rule'), m.source, 'unknown')"


class LearnedSession(TypedDict):
    session_key: str
    harness: str | None
    started_at: str
    context: str | None
    project: str | None
    first_prompt: str | None


class Learned(TypedDict):
    """A learned memory with the session it came from (None when the session is unknown)."""

    memory: Memory
    session: LearnedSession | None


class SessionAbout(TypedDict):
    """What a session was about (its first prompt, else its context) and what it taught."""

    harness: str | None
    context: str | None
    first_prompt: str | None
    learned: int
    pending: int
    rejected: int
    examples: list[dict[str, str]]  # {id, type, content} of the first three
    wrote: dict[str, int]  # everything the session wrote, by core.written kind: episode, claim, commit, note
    task: NotRequired[str | None]  # memory.review adds it


def _learned_sql() -> tuple[str, list[object]]:
    marks = ",".join("?" * len(LEARNED_SOURCES))
    return (f"(json_extract(m.metadata, '$.claim.rule') IS NOT NULL OR m.source IN ({marks}) OR m.stale_at IS NOT NULL)",
            list(LEARNED_SOURCES))


def _status_sql(status: str) -> str:
    return {
        "pending": f"(m.needs_review = 1 OR m.stale_at IS NOT NULL) AND COALESCE({_REVIEW}, '') != 'rejected'",
        "accepted": f"{_REVIEW} IN ('accepted', 'edited')",
        "rejected": f"{_REVIEW} = 'rejected'",
        "learned": "1 = 1",
        "stale": f"m.stale_at IS NOT NULL AND COALESCE({_REVIEW}, '') != 'rejected'",
    }[status]


def list_learned(conn: Connection, *, status: str, project: str | None, session_key: str | None, viewer: Viewer | None,
                 limit: int, offset: int) -> tuple[list[Learned], int]:
    """([{memory, session: {...} | None}], total) newest session first, then in writing order."""
    learned, params = _learned_sql()
    if status == "learned":  # everything kenning wrote by itself: its claims, and all a session wrote (issue 35)
        learned = f"({learned} OR m.session_key IS NOT NULL)"
    visible, vparams = visibility_sql(viewer)
    where = [f"m.is_deleted = 0 AND m.superseded_by IS NULL AND {learned} AND {_status_sql(status)}", visible]
    params = [*params, *vparams]
    if project is not None:
        where.append("m.project IS ?")
        params.append(project)
    if session_key is not None:
        where.append("m.session_key = ?")
        params.append(session_key)
    clause = " AND ".join(where)
    total = int(conn.execute(f"SELECT COUNT(*) FROM memories m WHERE {clause}", params).fetchone()[0])
    rows = conn.execute(
        "SELECT m.*, s.harness AS s_harness, s.started_at AS s_started_at, s.context AS s_context,"
        " s.project AS s_project,"
        " (SELECT p.prompt FROM session_prompts p WHERE p.session_key = m.session_key ORDER BY p.idx LIMIT 1)"
        " AS s_first_prompt"
        f" FROM memories m LEFT JOIN sessions s ON s.session_key = m.session_key WHERE {clause}"
        " ORDER BY COALESCE(s.started_at, m.created_at) DESC, m.session_key, m.rid LIMIT ? OFFSET ?",
        [*params, limit, offset],
    ).fetchall()
    out: list[Learned] = []
    for row in rows:
        data = dict(row)
        session: LearnedSession | None = None
        if data.get("session_key") and data.get("s_started_at") is not None:
            session = {"session_key": str(data["session_key"]), "harness": data.get("s_harness"),
                       "started_at": str(data["s_started_at"]), "context": data.get("s_context"),
                       "project": data.get("s_project"), "first_prompt": data.get("s_first_prompt")}
        for key in [k for k in data if k.startswith("s_")]:
            data.pop(key)
        out.append({"memory": row_to_memory(data), "session": session})
    return out, total


def rule_counts(conn: Connection) -> dict[str, dict[str, int]]:
    """{extraction rule: {learned, pending, accepted, rejected}} over live learned memories."""
    learned, params = _learned_sql()
    rows = conn.execute(
        f"SELECT {_RULE} AS rule, COUNT(*),"
        f" SUM(CASE WHEN m.needs_review = 1 AND COALESCE({_REVIEW}, '') != 'rejected' THEN 1 ELSE 0 END),"
        f" SUM(CASE WHEN {_REVIEW} IN ('accepted', 'edited') THEN 1 ELSE 0 END),"
        f" SUM(CASE WHEN {_REVIEW} = 'rejected' THEN 1 ELSE 0 END)"
        f" FROM memories m WHERE m.is_deleted = 0 AND {learned} GROUP BY {_RULE} ORDER BY 1",
        params,
    ).fetchall()
    return {r[0]: {"learned": int(r[1]), "pending": int(r[2] or 0), "accepted": int(r[3] or 0),
                   "rejected": int(r[4] or 0)} for r in rows}


def session_about(conn: Connection, session_keys: list[str], owner: str | None = None) -> dict[str, SessionAbout]:
    """What each session was about and what it taught: {key: {first_prompt, learned, pending,
    rejected, examples: [{id, type, content}]}} (learned memories only; raw episodes are not
    lessons). Keys without a session are left out."""
    keys = list(dict.fromkeys(k for k in session_keys if isinstance(k, str)))[:200]
    if not keys:
        return {}
    marks = ",".join("?" * len(keys))
    out: dict[str, SessionAbout] = {}
    mine = " AND s.owner = ?" if owner is not None else ""  # a team server's user: their own sessions only
    for row in conn.execute(
        "SELECT s.session_key, s.harness, s.context,"
        " (SELECT p.prompt FROM session_prompts p WHERE p.session_key = s.session_key ORDER BY p.idx LIMIT 1)"
        f" FROM sessions s WHERE s.session_key IN ({marks}){mine}", [*keys, *([owner] if owner is not None else [])],
    ).fetchall():
        out[row[0]] = {"harness": row[1], "context": row[2], "first_prompt": row[3], "learned": 0, "pending": 0,
                       "rejected": 0, "examples": [], "wrote": {}}
    for key, source, claim in conn.execute(
        "SELECT m.session_key, m.source, json_extract(m.metadata, '$.claim.rule') IS NOT NULL FROM memories m"
        f" WHERE m.session_key IN ({marks}) AND m.is_deleted = 0 AND m.superseded_by IS NULL", keys,
    ).fetchall():
        if key in out:
            kind = kind_of(source, bool(claim))
            out[key]["wrote"][kind] = out[key]["wrote"].get(kind, 0) + 1
    learned, params = _learned_sql()
    for row in conn.execute(
        f"SELECT m.session_key, m.id, m.type, m.content, m.needs_review, {_REVIEW} FROM memories m"
        f" WHERE m.session_key IN ({marks}) AND m.is_deleted = 0 AND m.superseded_by IS NULL AND {learned}"
        " ORDER BY m.session_key, m.rid", [*keys, *params],
    ).fetchall():
        about = out.get(row[0])
        if about is None:
            continue
        about["learned"] += 1
        if row[5] == "rejected":
            about["rejected"] += 1
        elif row[4]:
            about["pending"] += 1
        if len(about["examples"]) < 3:
            about["examples"].append({"id": row[1], "type": row[2], "content": row[3][:200]})
    return out
