"""The hooks' side of the spool (`kenning.core.spool`): keep what the daemon did not take.

`spool_request` is what a hook calls when its POST found no daemon within its deadline: the
request (API path and body) is appended to `$KENNING_HOME/spool/` with the transcript's path in
place of the transcript (the daemon reads it, confined, when it replays the event). It never
raises and never waits: the agent goes on either way.

`flush` is what a hook calls once it has reached a daemon: a daemon elsewhere (KENNING_URL, a
team server, any daemon with another home) never sees this spool, so the hook hands it over
itself through /api/hooks/replay — oldest first, at most `KENNING_SPOOL_FLUSH_MAX` (20) events,
only while at least FLUSH_MIN_LEFT_S of the hook's one deadline is left, each event under its
spool name (the id the daemon's own replay records, so an event is applied once whoever sends
it). The daemon of this home answers `local` for the first one and the hook stops: that daemon
replays its spool itself. A session end's transcript is read here, through the confined reader.
An event the daemon answers with 5xx is tried again at the next flushes and set aside (spool/held/,
counted, shown by `kenning doctor`) at its core.spool.FAILED_TRIES-th failure, so the events
after it still go (issue 33).
"""

from __future__ import annotations

import os
import time

from kenning.core.spool import Limits, append, has_pending, replay, stats  # noqa: F401 - stats: re-exported
from kenning.hooks import transcript_file
from kenning.hooks.transport import post

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from kenning.core.spool import Spooled
    from kenning.hooks.transport import Deadline

REPLAY_PATH = "/api/hooks/replay"
FLUSH_MAX_EVENTS = 20
FLUSH_MIN_LEFT_S = 0.25  # no event is started with less of the hook's deadline left
CARRIES_TRANSCRIPT = ("/api/hooks/session-end", "/api/hooks/pre-compaction")
REJECTED = ("http-400", "http-403", "http-413", "http-422")  # the daemon refused the event itself: dropped, counted


def kenning_home(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    return os.path.expanduser(env.get("KENNING_HOME") or os.path.join("~", ".kenning"))


def spool_request(path: str, body: Mapping[str, object], *, transcript_path: str | None, harness: str,
                  environ: Mapping[str, str] | None = None) -> Spooled:
    """Spool one undelivered hook request; {spooled, dropped, name}."""
    kept = {k: v for k, v in body.items() if k not in ("transcript", "transcript_refused")}
    record = {"harness": harness, "path": path, "body": kept,
              "transcript_path": transcript_path if isinstance(transcript_path, str) else None}
    return append(kenning_home(environ), record, Limits.from_env(environ))


def _flush_max(environ: Mapping[str, str] | None) -> int:
    env = os.environ if environ is None else environ
    try:
        return max(0, int(env.get("KENNING_SPOOL_FLUSH_MAX") or FLUSH_MAX_EVENTS))
    except ValueError:
        return FLUSH_MAX_EVENTS


def flush(base_url: str, token: str | None, deadline: Deadline, *, environ: Mapping[str, str] | None = None,
          config: Mapping[str, object] | None = None) -> dict[str, int | bool]:
    """Hand this home's spooled events to the daemon at `base_url` (see the module doc); never
    raises, never runs past `deadline`. Returns the replay counts plus `local` (the daemon of this
    home answered: it replays them itself); {} when there was nothing to send."""
    home = kenning_home(environ)
    limit = _flush_max(environ)
    if not limit or not has_pending(home):
        return {}
    local: list[bool] = []

    def handle(record: dict[str, object]) -> str:  # a spooled record, as read back from its file
        if deadline.at - time.monotonic() < FLUSH_MIN_LEFT_S:
            return "retry"
        body, path = record.get("body"), record.get("path")
        if not isinstance(body, dict) or not isinstance(body.get("session_key"), str) or not isinstance(path, str):
            return "rejected"
        request: dict[str, object] = {"session_key": body["session_key"], "event": record.get("spool_name"),
                                      "path": path, "body": body, "spooled_at": record.get("spooled_at")}
        transcript_path = record.get("transcript_path")
        if path in CARRIES_TRANSCRIPT and isinstance(transcript_path, str):
            reading = transcript_file.read_whole(transcript_path, deadline, environ=environ, config=config)
            if reading.text is not None:
                request["transcript"] = reading.text
            elif reading.reason and reading.reason != "no_path":
                request["transcript_refused"] = reading.reason
        failure: list[str] = []
        answer = post(base_url, REPLAY_PATH, request, token=token, timeout=0, deadline=deadline, failure=failure)
        if answer is None:  # refused by the daemon: dropped (counted); 5xx: failed (set aside after a few);
            if any(f in REJECTED for f in failure):  # unreachable, too slow, too old a daemon: kept
                return "rejected"
            return "failed" if any(f.startswith("http-5") for f in failure) else "retry"
        if answer.get("status") == "local":
            local.append(True)
            return "retry"
        return "done"

    try:
        counts = replay(home, handle, Limits.from_env(environ), max_events=limit, until=deadline.at - FLUSH_MIN_LEFT_S)
    except Exception:  # noqa: BLE001 - the agent goes on whatever the spool holds
        return {}
    return {**counts, "local": bool(local)}
