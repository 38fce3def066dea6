"""The hooks' transcript reader: `kenning.core.transcript_file`, confined to the harness folders.

A hook reads `transcript_path` only through here (whole at session end / pre-compaction, the
tail for resumed sessions and Stop feedback): a regular file inside the harness's transcript
folders (Claude Code `~/.claude/projects`, Codex `$CODEX_HOME/sessions`, Gemini CLI
`~/.gemini/tmp`, Copilot CLI `$COPILOT_HOME/session-state`, plus `KENNING_TRANSCRIPT_ROOTS` and config
`sessions.transcript_roots`), under
the size cap, within the hook's one deadline. A refusal names its reason (`Reading.reason`),
which the hook sends to the daemon as `transcript_refused` instead of any text.
"""

from __future__ import annotations

import os

from kenning.core.transcript_file import (  # noqa: F401 - re-exported for the hook adapters
    DEFAULT_MAX_BYTES, REASONS, REFUSALS, Reading, confined_path, default_roots, read_transcript,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from kenning.hooks.transport import Deadline


def roots(environ: Mapping[str, str] | None = None, config: Mapping[str, object] | None = None) -> list[str]:
    """The transcript folders a hook may read: the harness defaults, KENNING_TRANSCRIPT_ROOTS and
    `sessions.transcript_roots` of config.yaml (a list, or one os.pathsep-separated string)."""
    sessions = (config or {}).get("sessions") if isinstance((config or {}).get("sessions"), dict) else {}
    extra = sessions.get("transcript_roots") if isinstance(sessions, dict) else None
    if isinstance(extra, str):
        extra = extra.split(os.pathsep)
    return default_roots(environ, [e for e in extra or [] if isinstance(e, str)])


def read_whole(path: object, deadline: Deadline | None = None, *, environ: Mapping[str, str] | None = None,
               config: Mapping[str, object] | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Reading:
    """The whole transcript, or a refusal (see the module doc)."""
    return read_transcript(path, roots=roots(environ, config), max_bytes=max_bytes,
                           deadline_at=deadline.at if deadline is not None else None)


def read_tail(path: object, limit: int, deadline: Deadline | None = None, *,
              environ: Mapping[str, str] | None = None, config: Mapping[str, object] | None = None) -> Reading:
    """The last `limit` bytes of the transcript from a line start, or a refusal."""
    return read_transcript(path, roots=roots(environ, config), tail=limit,
                           deadline_at=deadline.at if deadline is not None else None)
