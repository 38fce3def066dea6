"""The daemon's side of the hook spool and of stale sessions (issue 26).

`SpoolReplayer.kick()` runs at daemon start and whenever a hook reaches the daemon (the hooks
router calls it): in one background thread at a time it

1. replays `$KENNING_HOME/spool/` (core/spool.py), oldest first, through the same handlers the
   hook routes use; each event is applied once (its spool name is recorded), a replayed prompt
   already stored is not stored again, and a replayed session end of a session that has ended
   stores nothing; a session end's transcript is read from its path through the confined reader
   (core/transcript_file.py), never from anywhere else;
2. ends the sessions left `active` past `sessions.stale_after_minutes` whose transcript is
   readable (confined) from that transcript — at daemon start and at each session start, and every
   `sessions.idle_check_s` (`watch`). Sessions of harnesses that never say a session ended
   (`sessions.idle_end_harnesses`: Codex CLI) end `sessions.idle_end_minutes` after their last turn.

An event the daemon refuses (bad input) is dropped and counted; any other failure leaves it in
the spool for the next kick.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import fields, replace
from typing import TypeVar

from kenning.core import spool, transcript_file
from kenning.core.errors import KenningError
from kenning.core.events import (
    EVENT_KINDS, Compacted, HookEvent, PromptSubmitted, SessionEnded, SessionStarted, event_from_dict, session_key,
)
from kenning.core.types import Viewer
from kenning.hookservice import tool_result_from_body
from kenning.core.telemetry import log_event, record_error
from kenning.service import Kenning


LOCAL_RECHECK_S = 1.0  # after answering a hook of this home 'local', replay again (its claim is released by then)


class SpoolReplayer:
    def __init__(self, k: Kenning) -> None:
        self.k = k
        self.home = str(k.settings.home)
        self._lock = threading.Lock()
        self._running = False
        self._again = False
        self._stale_checked = 0.0
        self._drops_seen = 0
        self.last: dict[str, int] = {}  # the last replay's counts (spool.replay's, and stale_ended)
        self._watching = threading.Event()

    # -- when -----------------------------------------------------------------------------------
    def watch(self) -> None:
        """Look for sessions to end every `sessions.idle_check_s` (a Codex session ends while no
        other session starts), in one background thread until `stop_watching`."""
        self._watching.clear()

        def loop() -> None:
            while not self._watching.wait(self.k.settings.sessions.idle_check_s):
                self.kick(stale=True)

        threading.Thread(target=loop, name="idle-sessions", daemon=True).start()

    def stop_watching(self) -> None:
        self._watching.set()

    def kick(self, *, stale: bool = False) -> None:
        """Replay in the background if the spool has events (or `stale`: check stale sessions)."""
        due = stale and time.monotonic() - self._stale_checked >= self.k.settings.sessions.idle_check_s
        if not (due or spool.has_pending(self.home)):
            return
        with self._lock:
            if self._running:
                self._again = True
                return
            self._running = True
        threading.Thread(target=self._loop, args=(due,), name="spool-replay", daemon=True).start()

    def _loop(self, stale: bool) -> None:
        try:
            while True:
                self.run_once(stale=stale)
                with self._lock:
                    if not self._again:
                        self._running = False
                        return
                    self._again, stale = False, False
        except Exception as exc:  # the replayer must never take the daemon down
            record_error("sessions", f"spool replay failed: {exc}", kind=type(exc).__name__)
            with self._lock:
                self._running = False

    def run_once(self, *, stale: bool = True) -> dict[str, int]:
        counts = spool.replay(self.home, self._handle)
        queued = spool.stats(self.home)
        if queued["dropped"] > self._drops_seen:  # dropped at the cap while the daemon was away, or now
            record_error("hooks", f"hook spool full or too old: {queued['dropped'] - self._drops_seen} oldest "
                         f"event(s) dropped ({queued['dropped']} in all)", drop_reasons=queued["drop_reasons"],
                         last_dropped_at=queued["last_dropped_at"])
            self._drops_seen = queued["dropped"]
        ended = self.end_stale() if stale else []
        self.last = {**counts, "stale_ended": len(ended)}
        if any(counts[k] for k in ("done", "rejected", "dropped")) or ended:
            log_event("sessions", "hook spool replayed", level="info", **self.last)
        return self.last

    # -- one event ------------------------------------------------------------------------------
    def _read(self, path: object) -> transcript_file.Reading:
        """The transcript at `path` (a spooled record's, untrusted: the confined reader checks it)."""
        roots = transcript_file.default_roots(extra=self.k.settings.sessions.transcript_roots)
        return transcript_file.read_transcript(path, roots=roots, max_bytes=self.k.settings.sessions.transcript_max_chars)

    def _handle(self, record: Mapping[str, object]) -> str:
        """One spooled record (JSON read back from the spool: untrusted, narrowed here)."""
        name = str(record.get("spool_name") or "")
        if not name or self.k.sessions.recovery.replayed(name):
            return "done"
        spooled = record.get("body")
        if not isinstance(spooled, dict) or not isinstance(spooled.get("session_key"), str):
            return "rejected"
        body: dict[str, object] = {**spooled, "timestamp": spooled.get("timestamp") or record.get("spooled_at")}
        transcript_path = record.get("transcript_path")
        try:
            self._apply(str(record.get("path") or ""), body, lambda: self._read(transcript_path), self.k.local_viewer,
                        local_path=body.get("transcript_path") or transcript_path)
        except KenningError as exc:
            if exc.status_code >= 500:
                record_error("sessions", f"spool replay of {record.get('path')} failed: {exc}")
                return "retry"
            log_event("sessions", "spooled event refused", path=record.get("path"), error=str(exc))
            return "rejected"
        except Exception as exc:  # a transient failure: kept for the next kick
            record_error("sessions", f"spool replay of {record.get('path')} failed: {exc}", kind=type(exc).__name__)
            return "retry"
        self.k.sessions.recovery.mark_replayed(name)
        return "done"

    def from_hook(self, name: str, path: str, body: Mapping[str, object], transcript: str | None,
                  spooled_at: str | None, viewer: Viewer | None) -> str:
        """An event a hook flushes from its own spool (a laptop whose daemon is elsewhere):
        'local' when it is this daemon's own spool (it replays it itself), 'duplicate' when the
        event was applied already (same spool name), else applied as the replay would: 'done'.
        The transcript comes from the hook (read there, confined), never from a path here.
        A team user's event names are theirs alone; their events go only to their own sessions
        (`HooksService.owned`: Forbidden otherwise)."""
        key = body.get("session_key")
        with self.k.hooks.owned(key if isinstance(key, str) else "", viewer):
            return self._from_hook(name, path, body, transcript, spooled_at, viewer)

    def _from_hook(self, name: str, path: str, body: Mapping[str, object], transcript: str | None,
                   spooled_at: str | None, viewer: Viewer | None) -> str:
        if spool.holds(self.home, name):  # the hook holds its claim until it has this answer: look again soon
            timer = threading.Timer(LOCAL_RECHECK_S, self.kick)
            timer.daemon = True
            timer.start()
            return "local"
        key = name if viewer is None or viewer.sees_all else f"{viewer.user}:{name}"
        recovery = self.k.sessions.recovery
        if recovery.replayed(key):
            return "duplicate"
        body = {**body, "timestamp": body.get("timestamp") or spooled_at}
        reading = transcript_file.Reading(transcript, None) if transcript else transcript_file.Reading(None, "no_path")
        self._apply(path, body, lambda: reading, viewer, local_path=None)
        recovery.mark_replayed(key)
        return "done"

    def _apply(self, path: str, body: dict[str, object], read: Callable[[], transcript_file.Reading],
               viewer: Viewer | None, *, local_path: object) -> None:
        """Apply one spooled event; `read` gives its transcript; `local_path` (own spool only) is
        the transcript path a session start notes for ending a stale session."""
        k, at = self.k, _text(body.get("timestamp"))
        if not isinstance(body["session_key"], str):  # both callers checked it
            raise InvalidPath(f"spooled {path} event without a session key")
        key = body["session_key"] = session_key(body["session_key"])  # the one rule (a spooled body is raw)
        recovery = k.sessions.recovery
        if path == "/api/hooks/session-start":
            shown = recovery.shown(key)
            k.sessions.session_start(_event(SessionStarted, body), None, viewer)
            recovery.not_delivered(key, shown)  # the hook gave up on the daemon: the agent got no memories
            if local_path:  # a path on this machine: never one a hook elsewhere sent
                recovery.note_transcript_path(key, local_path)
        elif path == "/api/hooks/user-prompt-submit":
            if at is None or not recovery.prompt_recorded_at(key, at):
                shown = recovery.shown(key)
                k.sessions.user_prompt_submit(_event(PromptSubmitted, body), None, viewer)
                recovery.not_delivered(key, shown)
        elif path == "/api/hooks/post-tool-use":
            k.hooks.tool_result(tool_result_from_body(body))
        elif path == "/api/hooks/feedback":
            k.sessions.feedback(key, body.get("memory_feedback"),  # (its owner: checked by from_hook's `owned`)
                               shown_only=viewer is not None and not viewer.sees_all)
        elif path == "/api/hooks/pre-compaction":
            reading = read()
            compacted = _event(Compacted, {"trigger": "pre-compaction", **body})
            k.sessions.checkpoint(replace(compacted, transcript=reading.text) if reading.ok else compacted)
        elif path == "/api/hooks/session-end":
            if recovery.ended(key):
                return  # ended already (the live call got through, or an earlier replay): nothing twice
            reading = read()
            self.end(key, reading.text if reading.ok else None, at)
        else:
            raise InvalidPath(f"unknown spooled hook path {path!r}")

    def end(self, key: str, transcript: str | None, at: str | None) -> None:
        """End the session as its SessionEnd hook would have (the hooks service: summary job and
        observer promotion)."""
        self.k.hooks.session_ended(SessionEnded(session_key=key, transcript=transcript, timestamp=at))

    # -- stale sessions ---------------------------------------------------------------------------
    def end_stale(self) -> list[str]:
        """End the sessions left active past the idle limit from their (readable) transcripts."""
        self._stale_checked = time.monotonic()
        ended = []
        cfg, recovery = self.k.settings.sessions, self.k.sessions.recovery
        rows = recovery.stale(cfg.stale_after_minutes)
        idle: set[str] = set()
        if cfg.idle_end_harnesses:  # harnesses without a session-end event: idle after their last turn
            known = {row["session_key"] for row in rows}
            more = [row for row in recovery.stale(cfg.idle_end_minutes, harnesses=cfg.idle_end_harnesses)
                    if row["session_key"] not in known]
            rows, idle = rows + more, {row["session_key"] for row in more}
        for row in rows:
            reading = self._read(row["transcript_path"])
            if not reading.ok and row["session_key"] not in idle:
                continue  # unreadable or refused: left as it is
            try:  # (an idle-ended session's transcript was kept at each turn's end: it ends on that one)
                self.end(row["session_key"], reading.text if reading.ok else None, row["last_at"])
            except KenningError as exc:
                record_error("sessions", f"ending stale session failed: {exc}", session_key=row["session_key"])
                continue
            ended.append(row["session_key"])
        if ended:
            log_event("sessions", "stale sessions ended from their transcripts", count=len(ended))
        return ended


E = TypeVar("E", bound=HookEvent)


def _event(cls: type[E], body: Mapping[str, object]) -> E:
    """The event a spooled hook body stands for: its keys that are the event's fields (a hook of another
    version may send more), read by core.events.event_from_dict (InvalidInput for a bad one)."""
    names = {f.name for f in fields(cls) if f.init}
    kind = next(name for name, kind_cls in EVENT_KINDS.items() if kind_cls is cls)
    event = event_from_dict({"kind": kind, **{k: v for k, v in body.items() if k in names}})
    if not isinstance(event, cls):
        raise InvalidPath(f"spooled body is not a {cls.__name__}")
    return event


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


class InvalidPath(KenningError):
    status_code = 400
