"""`kenning mcp`: an MCP server over stdio exposing memory tools, backed by the daemon's HTTP API.

Tools: memory_search, memory_store, memory_get, memory_forget, memory_feedback, code_impact. The server
holds no store of its own — every call goes through `kenning.client` to the running daemon,
so MCP clients and hooks see the same memories. Errors (daemon down, bad input) come back as
MCP tool errors with the daemon's one-line message.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from kenning import __version__
from kenning.client import KenningClient
from kenning.core.errors import KenningError

INSTRUCTIONS = (
    "kenning is this user's long-term memory for coding work. Search it before re-deriving project "
    "facts, store durable decisions, preferences and gotchas, and rate injected memories with "
    "memory_feedback (-1 harmful .. 1 shaped your answer)."
)
SEARCH_FIELDS = ("id", "content", "score", "type", "project", "tags", "importance", "created_at", "pinned")


def _call(fn, *args, **kwargs) -> Any:
    try:
        return fn(*args, **kwargs)
    except KenningError as exc:
        raise ToolError(str(exc)) from exc


def build_server(client: KenningClient) -> MCPServer:
    server = MCPServer(name="kenning", version=__version__, instructions=INSTRUCTIONS)

    @server.tool()
    def memory_search(query: str, limit: int = 10, project: str | None = None,
                      types: list[str] | None = None) -> list[dict[str, Any]]:
        """Hybrid (keyword + semantic) search over memories; best first."""
        body: dict[str, Any] = {"query": query, "limit": max(1, min(int(limit), 100))}
        if project:
            body["project"] = project
        if types:
            body["types"] = types
        hits = _call(client.recall, body)
        return [{k: h.get(k) for k in SEARCH_FIELDS} for h in hits]

    @server.tool()
    def memory_store(content: str, type: str = "fact", importance: float = 0.5, tags: list[str] | None = None,
                     project: str | None = None, pinned: bool = False) -> dict[str, Any]:
        """Store a durable memory (decision, preference, gotcha, fact, …). Exact duplicates are not stored twice."""
        return _call(client.remember, {
            "content": content, "type": type, "importance": importance, "tags": tags or [],
            "project": project, "pinned": pinned, "source": "mcp",
        })

    @server.tool()
    def memory_get(memory_id: str) -> dict[str, Any]:
        """One memory with its metadata and change history."""
        return _call(client.get, memory_id)

    @server.tool()
    def memory_forget(memory_id: str, reason: str | None = None) -> dict[str, Any]:
        """Forget a memory (soft delete: it can be recovered)."""
        memory = _call(client.forget, memory_id, reason=reason)
        return {"id": memory.get("id", memory_id), "is_deleted": bool(memory.get("is_deleted", True))}

    @server.tool()
    def memory_feedback(session_key: str, scores: dict[str, float]) -> dict[str, Any]:
        """Rate memories injected into this session: id → score in -1 (harmful) .. 1 (directly useful)."""
        return _call(client.memory_feedback, session_key, scores)

    @server.tool()
    def code_impact(target: str, project: str | None = None, depth: int = 3) -> dict[str, Any]:
        """What breaks if TARGET changes: dependents (with depth and path), covering tests and linked
        memories. TARGET is `path`, `path:symbol` or a dotted name, relative to the indexed root."""
        params: dict[str, Any] = {"target": target, "depth": max(1, min(int(depth), 10))}
        if project:
            params["project"] = project
        return _call(client.request, "GET", "/api/code/impact", params=params)

    return server


def serve_stdio(base_url: str, token: str | None = None, timeout: float = 30.0) -> None:
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per tool call is noise
    client = KenningClient(base_url, token=token, timeout=timeout)
    try:
        build_server(client).run("stdio")
    finally:
        client.close()
