"""Reading sessions back (the API's `/api/sessions`, `kenning sessions list|show`): plain store reads,
so the CLI's offline commands use them without building the session lifecycle."""

from __future__ import annotations

from dataclasses import asdict
from typing import TypedDict, cast

from kenning.core.errors import NotFound
from kenning.store import sessions as store
from kenning.store.backend import Connection
from kenning.store.sessions import (
    Checkpoint, CreatedMemory, SessionListItem, SessionMemoryRow, SessionPrompt, SessionRow, SessionScoreRow,
    SummaryJobView,
)


class SessionList(TypedDict):
    """A page of sessions, newest first, and how many there are in all."""
    sessions: list[SessionListItem]
    total: int


class CheckpointView(TypedDict):
    """A checkpoint as the session view shows it (store.sessions.Checkpoint's fields)."""
    id: int
    trigger: str
    content: str
    created_at: str


class TranscriptRecord(TypedDict):
    """The stored transcript, without its text."""
    sha256: str
    chars: int
    created_at: str


class SessionDetail(TypedDict):
    """One session with everything recorded about it (`kenning sessions show`, GET /api/sessions/{key})."""
    session: SessionRow
    memories: list[SessionMemoryRow]
    injected: list[str]
    created: list[CreatedMemory]
    prompts: list[SessionPrompt]
    checkpoints: list[CheckpointView]
    score: SessionScoreRow | None
    summary_job: SummaryJobView | None
    transcript: TranscriptRecord | None


def _checkpoint(c: Checkpoint) -> CheckpointView:
    return cast(CheckpointView, asdict(c))


def session_list(conn: Connection, *, limit: int = 50, offset: int = 0, project: str | None = None) -> SessionList:
    rows, total = store.list_sessions(conn, limit=limit, offset=offset, project=project)
    return {"sessions": rows, "total": total}


def session_detail(conn: Connection, session_key: str) -> SessionDetail:
    """The session with what it was offered and injected, what it created, its prompts, checkpoints,
    score, summary job and transcript record (without the text)."""
    session = store.get_session(conn, session_key)
    if session is None:
        raise NotFound(f"no session {session_key!r}")
    memories = store.session_memories(conn, session_key)
    transcript = store.get_transcript(conn, session_key)
    return {
        "session": session,
        "memories": memories,
        "injected": [m["memory_id"] for m in memories if m["was_injected"]],
        "created": store.created_memories(conn, session_key),
        "prompts": store.session_prompts(conn, session_key),
        "checkpoints": [_checkpoint(c) for c in store.checkpoints(conn, session_key)],
        "score": store.get_session_score(conn, session_key),
        "summary_job": store.get_summary_job(conn, session_key),
        "transcript": ({"sha256": transcript.sha256, "chars": transcript.chars, "created_at": transcript.created_at}
                       if transcript else None),
    }
