"""Confined transcript reading: a harness's transcript, and nothing else, under one deadline.

A hook payload names `transcript_path`; it is untrusted input (issue 26: `/etc/shadow`,
`/proc/self/environ`, a FIFO or `/dev/zero` were read and uploaded, or hung the hook). A
transcript is read only when

- its real path (every symlink resolved) lies inside one of the harness transcript folders
  (`default_roots`: Claude Code `~/.claude/projects`, Codex `$CODEX_HOME/sessions`, Gemini CLI
  `~/.gemini/tmp`, Copilot CLI `$COPILOT_HOME/session-state`; more via `KENNING_TRANSCRIPT_ROOTS`
  or `sessions.transcript_roots`),
- it is a regular file (checked on the open descriptor, opened `O_NONBLOCK | O_NOFOLLOW`, so a
  FIFO or device never blocks the caller and a link swapped in after the check is not followed),
- its size is under the cap (checked before a byte is read),
- and the read ends before the caller's deadline.

Anything else is refused with a reason from `REASONS`, counted in `REFUSALS` (this process), and
nothing is read. Used by the hook processes (through `kenning.hooks.transcript_file`) and by the
daemon (spool replay, ending stale sessions). Standard library only: hooks start fast.
"""

from __future__ import annotations

import os
import stat
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
CHUNK = 1024 * 1024
ROOTS_ENV = "KENNING_TRANSCRIPT_ROOTS"
REASONS = ("no_path", "outside_roots", "missing", "not_regular", "too_large", "deadline", "unreadable")
REFUSALS: dict[str, int] = {}


class Reading:
    """What one read gave: `text` (None when refused), the refusal `reason`, the file's `size`."""

    __slots__ = ("text", "reason", "size", "path")

    def __init__(self, text: str | None, reason: str | None = None, size: int = 0, path: str | None = None) -> None:
        self.text, self.reason, self.size, self.path = text, reason, size, path

    @property
    def ok(self) -> bool:
        return self.reason is None

    def __repr__(self) -> str:  # never the text
        return f"Reading(reason={self.reason!r}, size={self.size}, chars={len(self.text or '')})"


def default_roots(environ: Mapping[str, str] | None = None, extra: Sequence[str] = ()) -> list[str]:
    """The harness transcript folders: Claude Code, Codex, Gemini CLI, Copilot CLI, plus `extra` and the
    os.pathsep-separated `KENNING_TRANSCRIPT_ROOTS`."""
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    codex_home = env.get("CODEX_HOME") or os.path.join(home, ".codex")
    claude_dir = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    copilot_home = env.get("COPILOT_HOME") or os.path.join(home, ".copilot")
    roots = [os.path.join(claude_dir, "projects"), os.path.join(codex_home, "sessions"),
             os.path.join(home, ".gemini", "tmp"), os.path.join(copilot_home, "session-state")]
    roots += [r for r in (env.get(ROOTS_ENV) or "").split(os.pathsep) if r.strip()]
    roots += [r for r in extra if isinstance(r, str) and r.strip()]
    return roots


def _refuse(reason: str, size: int = 0, path: str | None = None) -> Reading:
    REFUSALS[reason] = REFUSALS.get(reason, 0) + 1
    return Reading(None, reason, size, path)


def confined_path(path: object, roots: Sequence[str]) -> str | None:
    """The real path of `path` when it lies inside one of `roots` (symlinks resolved on both
    sides), else None."""
    if not isinstance(path, str) or not path.strip() or "\x00" in path:
        return None
    try:
        real = os.path.realpath(os.path.expanduser(path))
    except (OSError, ValueError):
        return None
    for root in roots:
        try:
            real_root = os.path.realpath(os.path.expanduser(root))
        except (OSError, ValueError):
            continue
        if real != real_root and real.startswith(real_root.rstrip(os.sep) + os.sep):
            return real
    return None


def read_transcript(path: object, *, roots: Sequence[str] | None = None, max_bytes: int = DEFAULT_MAX_BYTES,
                    deadline_at: float | None = None, tail: int | None = None) -> Reading:
    """Read the transcript at `path` (all of it, or its last `tail` bytes from a line start)
    when it is confined (see the module doc); `deadline_at` is a `time.monotonic()` instant."""
    if not isinstance(path, str) or not path.strip():
        return _refuse("no_path")
    real = confined_path(path, default_roots() if roots is None else roots)
    if real is None:
        return _refuse("outside_roots", path=path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags)
    except FileNotFoundError:
        return _refuse("missing", path=path)
    except OSError:
        return _refuse("unreadable", path=path)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return _refuse("not_regular", path=path)
        size = info.st_size
        if tail is None and size > max_bytes:
            return _refuse("too_large", size, path)
        start = max(0, size - tail) if tail is not None else 0
        want = min(size - start, max_bytes)
        if start:
            os.lseek(fd, start, os.SEEK_SET)
        chunks: list[bytes] = []
        got = 0
        while got < want:
            if deadline_at is not None and time.monotonic() >= deadline_at:
                return _refuse("deadline", size, path)
            chunk = os.read(fd, min(CHUNK, want - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError:
        return _refuse("unreadable", path=path)
    finally:
        os.close(fd)
    text = b"".join(chunks).decode("utf-8", "replace")  # the daemon refuses lone surrogates
    if start and "\n" in text:
        text = text.split("\n", 1)[1]
    return Reading(text, None, size, path)
