"""What every /api/hooks call passes first (a router dependency, issue 26).

- Ownership on a team server: a session key belongs to the user whose token opened it; another
  user's hook call on it is refused with 403 before its handler runs, so nothing is stored. The key
  is checked as the engine stores it (core.events.session_key: blanks around it stripped), so A's
  key with a trailing space or newline is still A's.
  The local user (and the admin token) may use any session: the laptop side is unchanged.
- A transcript the hook refused to read (`transcript_refused`: outside the harness folders, not a
  regular file, too large, past the deadline) is counted by reason (core.transcript_file.REFUSALS).
- The spool replayer (api/replay.py) gets its kick: spooled events go in now, and at a session
  start sessions left active past the idle limit are ended from their transcripts.
- After the handler: the session is the caller's (team servers), and on the user's own daemon a
  session start's `transcript_path` is kept so a stale session can be ended from it (confined).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from kenning.api.deps import get_kenning, get_viewer
from kenning.core import transcript_file
from kenning.core.errors import InvalidInput
from kenning.core.events import session_key
from kenning.core.telemetry import log_event
from kenning.core.types import Viewer
from kenning.service import Kenning
from kenning.sessions.recovery import Recovery

_STARTS = ("/api/hooks/session-start",)


LARGE_BODY = 256 * 1024  # a body this big carries a transcript: no refusal in it to count


async def _body(request: Request, viewer: Viewer) -> dict[str, object] | None:
    """The hook's JSON body when it is an object (untrusted: each key is narrowed where read)."""
    raw = await request.body()
    if viewer.sees_all and len(raw) > LARGE_BODY and request.url.path not in _STARTS + ("/api/hooks/event",):
        return None  # the local user owns every session: no need to parse a transcript twice
    try:
        data = json.loads(raw or b"null")
    except (ValueError, UnicodeError):
        return None
    return data if isinstance(data, dict) else None


def _key(body: dict[str, object] | None) -> str | None:
    """The body's session key normalised by the one rule (core.events.session_key), as the engine
    will store it; None when it has none or a bad one (the handler's validation answers that)."""
    raw = (body.get("session_key") or body.get("session_id")) if body else None
    try:
        return session_key(raw) if isinstance(raw, str) else None
    except InvalidInput:
        return None


async def hook_guard(request: Request, k: Kenning = Depends(get_kenning),
                     viewer: Viewer = Depends(get_viewer)) -> AsyncIterator[None]:
    body = await _body(request, viewer)
    key = _key(body)  # ownership is checked on the key the engine stores (issue 33), never the raw one
    recovery = Recovery(k.sessions.deps)
    if isinstance(key, str):
        await run_in_threadpool(recovery.check_owner, key, viewer)  # Forbidden → 403
    refused = body.get("transcript_refused") if body else None
    if isinstance(refused, str) and refused in transcript_file.REASONS:
        transcript_file.REFUSALS[refused] = transcript_file.REFUSALS.get(refused, 0) + 1
        log_event("hooks", "transcript refused by the hook", reason=refused, session_key=key)
    starting = request.url.path in _STARTS or (body or {}).get("kind") == "session_started"
    replayer = getattr(request.app.state, "replayer", None)
    if replayer is not None:
        replayer.kick(stale=starting)
    yield
    if not isinstance(key, str):
        return
    if not viewer.sees_all:
        await run_in_threadpool(recovery.check_owner, key, viewer, claim=True)
    elif starting and body is not None:  # (a key was read from it)
        await run_in_threadpool(recovery.note_transcript_path, key, body.get("transcript_path"))
