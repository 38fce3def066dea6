"""What every /api/hooks call passes first (a router dependency, issue 26).

- A transcript the hook refused to read (`transcript_refused`: outside the harness folders, not a
  regular file, too large, past the deadline) is counted by reason (core.transcript_file.REFUSALS).
- The spool replayer (api/replay.py) gets its kick: spooled events go in now, and at a session
  start sessions left active past the idle limit are ended from their transcripts.

Ownership of a session (a team server's users) and the session start's `transcript_path` are the hooks
service's (`HooksService.handle`, issue 34): the one place that reads the event's key.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from fastapi import Request

from kenning.core import transcript_file
from kenning.core.telemetry import log_event

_STARTS = ("/api/hooks/session-start",)


LARGE_BODY = 256 * 1024  # a body this big carries a transcript: no refusal in it to count


async def _body(request: Request) -> dict[str, object] | None:
    """The hook's JSON body when it is an object (untrusted: each key is narrowed where read)."""
    raw = await request.body()
    if len(raw) > LARGE_BODY and request.url.path not in _STARTS + ("/api/hooks/event",):
        return None  # a transcript: no need to parse it twice
    try:
        data = json.loads(raw or b"null")
    except (ValueError, UnicodeError):
        return None
    return data if isinstance(data, dict) else None


async def hook_guard(request: Request) -> AsyncIterator[None]:
    body = await _body(request)
    refused = body.get("transcript_refused") if body else None
    if isinstance(refused, str) and refused in transcript_file.REASONS:
        transcript_file.REFUSALS[refused] = transcript_file.REFUSALS.get(refused, 0) + 1
        log_event("hooks", "transcript refused by the hook", reason=refused)
    starting = request.url.path in _STARTS or (body or {}).get("kind") == "session_started"
    replayer = getattr(request.app.state, "replayer", None)
    if replayer is not None:
        replayer.kick(stale=starting)
    yield
