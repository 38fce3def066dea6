"""Which working directories have kenning's MCP server connected right now (issue 32).

Where the agent can call kenning's `memory_feedback` tool, a prompt asks it to rate through the
tool instead of appending `<memory-feedback>` JSON to the answer the user reads. A hook cannot see
the agent's tools, so `kenning mcp` says so itself: when it starts it registers the directory it
was started in (the harness starts it in the session's directory) and unregisters when it exits.
A session whose directory is a registered one (or below it) rates through the tool; every other
session keeps the tag. Kept in memory only: after a daemon restart the servers are unknown until
they start again, and sessions fall back to the tag, which always works.
"""

from __future__ import annotations

import os
import threading
import uuid
from dataclasses import dataclass, field

MAX_CLIENTS = 256  # a misbehaving caller cannot grow this without bound


def _norm(path: str) -> str:
    return os.path.normpath(path).rstrip("/") or "/"


@dataclass
class McpClients:
    _dirs: dict[str, str] = field(default_factory=dict)  # token → directory
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def register(self, cwd: str) -> str:
        """A connected MCP server in `cwd`; its token, for `unregister`."""
        token = uuid.uuid4().hex
        with self._lock:
            if len(self._dirs) >= MAX_CLIENTS:
                self._dirs.pop(next(iter(self._dirs)))
            self._dirs[token] = _norm(cwd)
        return token

    def unregister(self, token: str) -> bool:
        with self._lock:
            return self._dirs.pop(token, None) is not None

    def directories(self) -> list[str]:
        """The directories with a connected MCP server (for the API and diagnostics)."""
        with self._lock:
            return sorted(set(self._dirs.values()))

    def connected(self, cwd: str | None) -> bool:
        """Is an MCP server connected in `cwd` or a directory above it?"""
        if not cwd:
            return False
        here = _norm(cwd)
        with self._lock:
            dirs = list(self._dirs.values())
        return any(here == d or here.startswith(d.rstrip("/") + "/") for d in dirs)
