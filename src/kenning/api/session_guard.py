"""What every /api/hooks call passes first (a router dependency, issue 26), and what a hook route does with
a transcript the hook refused to read.

- The spool replayer (api/replay.py) gets its kick: spooled events go in now, and at a session
  start sessions left active past the idle limit are ended from their transcripts. The guard reads only the
  path (no body): /api/hooks/event kicks from its route, which knows the event's kind (`kick`).
- A transcript the hook refused to read (`transcript_refused`: outside the harness folders, not a
  regular file, too large, past the deadline) is counted by reason (core.transcript_file.REFUSALS) by the
  route that read the body (`note_refusal`: pre-compaction, session-end, the spool's replay) — each body is
  parsed once, by its route (issue 34).

Ownership of a session (a team server's users) and the session start's `transcript_path` are the hooks
service's (`HooksService.handle`, issue 34): the one place that reads the event's key.
"""

from __future__ import annotations

from fastapi import Request

from kenning.core import transcript_file
from kenning.core.telemetry import log_event

STARTS = ("/api/hooks/session-start",)
EVENT = "/api/hooks/event"


def kick(request: Request, *, starting: bool) -> None:
    """The spool replayer's kick (`starting`: a session start, which also ends stale sessions)."""
    replayer = getattr(request.app.state, "replayer", None)
    if replayer is not None:
        replayer.kick(stale=starting)


def note_refusal(reason: str | None) -> None:
    """Count a transcript the hook refused to read, by its reason (one of core.transcript_file.REASONS; any
    other value is ignored: the hook's event is never refused for it)."""
    if reason is not None and reason in transcript_file.REASONS:
        transcript_file.REFUSALS[reason] = transcript_file.REFUSALS.get(reason, 0) + 1
        log_event("hooks", "transcript refused by the hook", reason=reason)


async def hook_guard(request: Request) -> None:
    if request.url.path != EVENT:
        kick(request, starting=request.url.path in STARTS)
