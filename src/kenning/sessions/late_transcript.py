"""The transcript a harness finishes writing after its session-end hook has run (issue 37).

GitHub Copilot CLI 1.0.102 writes a session's `events.jsonl` late: what its hooks read at sessionEnd
(and agentStop) may be only the session's first few KB; the answer, the agent's `<memory-feedback>`
and, when the process ends, `session.shutdown` land after the hook has returned (a wait inside the
hook does not help). So the summary job (workers/summaries.py), before it reads the stored
transcript, reads the file the session start named (`sessions.transcript_path`, noted on the user's
own daemon only) again, through the confined reader (core.transcript_file):

- finished (Copilot CLI: the last entry is `session.shutdown`): it replaces the stored transcript;
- not finished, written to within STABLE_S and the job younger than WAIT_S: `NotSettled`, and the
  summary worker puts the job back for RETRY_S (no attempt spent);
- not finished otherwise (the writer is gone, or it took too long): the file as it is.

The stored transcript is never replaced by a shorter one. Ratings the agent wrote that no agentStop
hook delivered (it read the file before the answer was in it) are applied from the file, once: only
to memories the session holds no agent rating for. Only sessions of LATE_WRITERS are read again
(their file must be Copilot CLI's events); every other harness's transcript stays as its hook sent it. The harness's own text is not stored as memory:
the file goes to the transcript table and is read by the transcript readers, as a hook's would be.
"""

from __future__ import annotations

import json
import os
import time

from kenning.core import transcript_file
from kenning.core.clock import now_iso
from kenning.core.secrets import redact
from kenning.core.telemetry import log_event
from kenning.sessions.context import SessionDeps
from kenning.sessions.harness_transcripts import JsonObject, copilot_finished, copilot_ratings, is_copilot
from kenning.sessions.prompt import apply_feedback
from kenning.store import sessions as store

LATE_WRITERS = frozenset({"copilot"})  # harnesses that finish their transcript after the session-end hook
STABLE_S = 30.0  # unchanged this long and still unfinished: the writer is gone (30 s: our longest hook timeout)
WAIT_S = 120.0  # the most a summary waits for its transcript to be finished
RETRY_S = 2.0


class NotSettled(Exception):
    """The harness is still writing the session's transcript: try again in `delay_s`."""

    def __init__(self, delay_s: float, reason: str) -> None:
        super().__init__(reason)
        self.delay_s = delay_s
        self.reason = reason


def _entries(text: str) -> list[JsonObject]:
    entries: list[JsonObject] = []
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line the writer has not finished
        if isinstance(entry, dict):
            entries.append(entry)
    return entries


def _quiet_s(path: str | None) -> float:
    """Seconds since the file was last written (0 when it cannot be told)."""
    try:
        return max(0.0, time.time() - os.stat(path).st_mtime) if path else 0.0
    except OSError:
        return 0.0


def settle(deps: SessionDeps, session_key: str, *, waited_s: float) -> str:
    """Take the session's transcript from its harness's file once finished (see the module doc);
    `waited_s`: how long the summary has waited so far. Returns what was done, for the log."""
    conn = deps.db.reader()
    session = store.get_session(conn, session_key)
    if session is None or session["harness"] not in LATE_WRITERS:
        return "not-late"  # other harnesses' transcripts are whole when their hook reads them: not read again
    path = session["transcript_path"]
    if not path:
        return "no-path"
    roots = transcript_file.default_roots(extra=deps.settings.transcript_roots)
    reading = transcript_file.read_transcript(path, roots=roots, max_bytes=deps.settings.transcript_max_chars)
    if not reading.ok or not reading.text:
        return f"refused:{reading.reason}"
    entries = _entries(reading.text)
    if not entries or not is_copilot(entries):
        return "not-copilot-events"
    finished = copilot_finished(entries)
    if not finished and waited_s < WAIT_S and _quiet_s(reading.path) < STABLE_S:
        raise NotSettled(RETRY_S, "the harness is still writing the session's transcript")
    kept = reading.text if deps.settings.store_raw_transcripts else redact(reading.text)
    stored = store.get_transcript(conn, session_key)
    replaced = stored is None or (kept != stored.transcript and len(kept) >= stored.chars)
    if replaced:
        with deps.db.with_write_tx() as wconn:
            store.save_transcript(wconn, session_key, kept, session["ended_at"] or now_iso())
    rated = _missed_ratings(deps, session_key, copilot_ratings(entries))
    state = "finished" if finished else "unfinished"
    log_event("sessions", "transcript read after the harness finished it", session_key=session_key, state=state,
              replaced=replaced, chars=len(kept), hook_chars=stored.chars if stored else None, ratings=rated,
              waited_s=round(waited_s, 1))
    return state


def _missed_ratings(deps: SessionDeps, session_key: str, ratings: dict[str, float]) -> int:
    """Apply the ratings of memories the session has no agent rating for; how many were applied."""
    if not ratings or not deps.settings.agent_feedback:
        return 0
    unrated = {row["memory_id"] for row in store.session_memories(deps.db.reader(), session_key)
               if not row.get("agent_feedback_count")}
    missed = {mid: score for mid, score in ratings.items() if mid in unrated}
    return apply_feedback(deps, session_key, missed)[0] if missed else 0
