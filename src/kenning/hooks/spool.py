"""The hooks' side of the spool (`kenning.core.spool`): keep what the daemon did not take.

`spool_request` is what a hook calls when its POST found no daemon within its deadline: the
request (API path and body) is appended to `$KENNING_HOME/spool/` with the transcript's path in
place of the transcript (the daemon reads it, confined, when it replays the event). It never
raises and never waits: the agent goes on either way.
"""

from __future__ import annotations

import os

from kenning.core.spool import Limits, append, stats  # noqa: F401 - re-exported for the hook adapters

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


def kenning_home(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    return os.path.expanduser(env.get("KENNING_HOME") or os.path.join("~", ".kenning"))


def spool_request(path: str, body: Mapping[str, Any], *, transcript_path: str | None, harness: str,
                  environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Spool one undelivered hook request; {spooled, dropped, name}."""
    kept = {k: v for k, v in body.items() if k not in ("transcript", "transcript_refused")}
    record = {"harness": harness, "path": path, "body": kept,
              "transcript_path": transcript_path if isinstance(transcript_path, str) else None}
    return append(kenning_home(environ), record, Limits.from_env(environ))
