"""Marks the agent's requests (hooks, recalls) as foreground work while they run (issue 36).

Background workers share the daemon's process and its GIL; `core.activity.yield_to_foreground`
makes them wait while one of these requests is in flight or has just ended. Plain ASGI, so the
mark spans the whole request, streaming included.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from kenning.core.activity import foreground_ended, foreground_started

FOREGROUND_PREFIXES = ("/api/hooks/", "/api/memory/recall")  # what an agent waits on (MCP recall comes here too)


def is_foreground(path: str) -> bool:
    return path.startswith(FOREGROUND_PREFIXES)


class ForegroundMark:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_foreground(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        foreground_started()
        try:
            await self.app(scope, receive, send)
        finally:
            foreground_ended()
