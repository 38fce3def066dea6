"""What the daemon needs to recover sessions whose end it missed (issue 26), and to keep a
session to the user who opened it on a team server.

- `note_transcript_path`: the session-start hook names where the harness keeps the transcript;
  a session still `active` long after its last prompt (`stale`: its transcript file unchanged as
  long) is ended from that file, read only through the confined reader (core/transcript_file).
- `replayed` / `mark_replayed`: the hook spool's events already applied (by file name), so a
  spool replayed twice applies each event once; `prompt_recorded_at` keeps a replayed prompt
  from being added again; `not_delivered` un-marks what a replayed session start or prompt chose
  (its answer reached no agent, so nothing was shown).
- `check_owner`: on a team server a session key belongs to its first user; another user's
  calls on it are refused (`Forbidden`, HTTP 403) before anything is stored.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import timedelta

from kenning.core.clock import now_iso, parse_iso, to_iso
from kenning.core.errors import Forbidden
from kenning.core.types import Viewer
from kenning.sessions.context import SessionDeps
from kenning.store import sessions as store
from kenning.store.sessions import StaleSession


class Recovery:
    def __init__(self, deps: SessionDeps) -> None:
        self.deps = deps

    def note_transcript_path(self, session_key: str, path: object) -> None:
        """Note where the harness keeps the transcript; `path` is the hook's JSON value (kept only
        when it is a plausible path string)."""
        if isinstance(path, str) and path.strip() and len(path) <= 4096 and "\x00" not in path:
            with self.deps.db.with_write_tx() as conn:
                store.set_transcript_path(conn, session_key, path)

    def stale(self, idle_minutes: float, *, now: str | None = None, limit: int = 50,
              harnesses: Sequence[str] | None = None) -> list[StaleSession]:
        """Active sessions (of `harnesses`, when given) idle past `idle_minutes` whose transcript
        file was not touched since."""
        cutoff = parse_iso(now or now_iso()) - timedelta(minutes=idle_minutes)
        rows = store.stale_sessions(self.deps.db.reader(), idle_before=to_iso(cutoff), limit=limit,
                                    harnesses=list(harnesses) if harnesses is not None else None)
        found: list[StaleSession] = []
        for row in rows:
            try:
                touched = os.stat(os.path.expanduser(row["transcript_path"])).st_mtime
            except (OSError, ValueError):
                touched = None
            if touched is not None and touched > cutoff.timestamp():
                continue  # the agent is still writing to it: not stale
            found.append(row)
        return found

    def replayed(self, name: str) -> bool:
        return store.spool_replayed(self.deps.db.reader(), name)

    def mark_replayed(self, name: str) -> None:
        with self.deps.db.with_write_tx() as conn:
            store.mark_spool_replayed(conn, name, now_iso())

    def shown(self, session_key: str) -> set[str]:
        """The memories recorded as shown to the session's agent so far."""
        return {mid for mid, injected in store.session_memory_state(self.deps.db.reader(), session_key).items()
                if injected}

    def not_delivered(self, session_key: str, before: set[str]) -> int:
        """A replayed hook chose memories, but its answer reached no agent (the hook had given up on
        the daemon): what it marked shown beyond `before` goes back to candidates (issue 35)."""
        fresh = sorted(self.shown(session_key) - before)
        if fresh:
            with self.deps.db.with_write_tx() as conn:
                store.unmark_injected(conn, session_key, fresh)
        return len(fresh)

    def prompt_recorded_at(self, session_key: str, at: str) -> bool:
        return store.prompt_recorded_at(self.deps.db.reader(), session_key, at)

    def ended(self, session_key: str) -> bool:
        session = store.get_session(self.deps.db.reader(), session_key)
        return bool(session and session.get("status") == "ended")

    def check_owner(self, session_key: object, viewer: Viewer | None, *, claim: bool = False) -> None:
        """Raise Forbidden when `viewer` (a team server's user) is not the session's owner (`session_key`:
        the caller's JSON value; one that is not a string is left to the handler's own check);
        with `claim`, a session without an owner becomes theirs. The local user (and the admin)
        may use any session."""
        if viewer is None or viewer.sees_all or not isinstance(session_key, str):
            return
        exists, owner = store.session_owner(self.deps.db.reader(), session_key)
        if exists and owner is None and claim:
            with self.deps.db.with_write_tx() as conn:
                owner = store.claim_owner(conn, session_key, viewer.user)
        if exists and owner is not None and owner != viewer.user:
            raise Forbidden("this session belongs to another user")
