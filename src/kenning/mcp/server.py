"""`kenning mcp`: an MCP server over stdio exposing memory tools, backed by the daemon's HTTP API.

Tools: memory_search, memory_store, memory_get, memory_forget, memory_recover, memory_feedback,
code_impact. At start it registers its directory with the daemon (and unregisters at exit), so
prompts there ask the agent to rate through memory_feedback rather than in its answer. Every argument has a description in the tool schema; `type` is an enum. The server
holds no store of its own — every call goes through `kenning.client` to the running daemon,
so MCP clients and hooks see the same memories. Errors (daemon down, bad input) come back as
MCP tool errors with the daemon's one-line message.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Literal, ParamSpec, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from kenning import __version__
from kenning.client import KenningClient
from kenning.core.errors import KenningError
from kenning.core.types import MEMORY_TYPES

INSTRUCTIONS = (
    "kenning is this user's long-term memory for coding work. Search it before re-deriving project "
    "facts, store durable decisions, preferences and gotchas, and rate injected memories with "
    "memory_feedback (-1 harmful .. 1 shaped your answer)."
)
SEARCH_FIELDS = ("id", "content", "score", "type", "project", "tags", "importance", "created_at", "pinned",
                 "legs", "reasons")
if TYPE_CHECKING:  # the checker sees the name (a Literal built at run time is no static type)
    MemoryType = str
else:
    MemoryType = Literal[tuple(sorted(MEMORY_TYPES))]  # the enum the tools declare


P = ParamSpec("P")
T = TypeVar("T")


def _call(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`fn(*args, **kwargs)`, its KenningError (daemon down, bad input) as the tool's error."""
    try:
        return fn(*args, **kwargs)
    except KenningError as exc:
        raise ToolError(str(exc)) from exc


def build_server(client: KenningClient) -> MCPServer:
    server = MCPServer(name="kenning", version=__version__, instructions=INSTRUCTIONS)

    @server.tool()
    def memory_search(
        query: Annotated[str, Field(description="What to look for, in words (keywords and meaning both count).")],
        limit: Annotated[int | None, Field(ge=1, le=100, description="How many memories to return, best first"
                                                 " (default: the daemon's recall.default_limit).")] = None,
        project: Annotated[str | None, Field(description="Only this project's memories (its git root name).")] = None,
        types: Annotated[list[MemoryType] | None, Field(description="Only memories of these types.")] = None,
    ) -> list[dict[str, object]]:
        """Hybrid search (BM25 keywords + vectors, fused) over memories, best first. Each result says
        which legs found it and at what rank/score (`legs`) and why it ranks (`reasons`)."""
        body: dict[str, object] = {"query": query}
        if limit is not None:
            body["limit"] = max(1, min(int(limit), 100))
        if project:
            body["project"] = project
        if types:
            body["types"] = types
        hits = _call(client.recall, body)
        return [{k: h.get(k) for k in SEARCH_FIELDS} for h in hits]

    @server.tool()
    def memory_store(
        content: Annotated[str, Field(description="The memory itself: one durable, self-contained statement.")],
        type: Annotated[MemoryType, Field(description="What kind of memory: decision, preference, gotcha, fact, …")] = "fact",
        importance: Annotated[float, Field(ge=0, le=1, description="0..1; how much it should outrank others.")] = 0.5,
        tags: Annotated[list[str] | None, Field(description="Free-form labels.")] = None,
        project: Annotated[str | None, Field(description="Project it belongs to (its git root name); none = global.")] = None,
        pinned: Annotated[bool, Field(description="Always rank it first for its project.")] = False,
    ) -> dict[str, object]:
        """Store a durable memory (decision, preference, gotcha, fact, …). Exact duplicates are not stored twice."""
        body = {"content": content, "importance": importance, "tags": tags or [], "project": project,
                "pinned": pinned, "source": "mcp"}
        # the default 'fact' is left to the write rules (a rule stated in its own words becomes a constraint)
        return _call(client.remember, {**body, "type": type} if type != "fact" else body)

    @server.tool()
    def memory_get(memory_id: Annotated[str, Field(description="The memory's id (from memory_search).")]) -> dict[str, object]:
        """One memory with its metadata and change history."""
        return _call(client.get, memory_id)

    @server.tool()
    def memory_forget(
        memory_id: Annotated[str, Field(description="The memory's id.")],
        reason: Annotated[str | None, Field(description="Why it is wrong or obsolete (kept in its history).")] = None,
    ) -> dict[str, object]:
        """Forget a memory (soft delete: memory_recover brings it back)."""
        memory = _call(client.forget, memory_id, reason=reason)
        return {"id": memory.get("id", memory_id), "is_deleted": bool(memory.get("is_deleted", True))}

    @server.tool()
    def memory_recover(memory_id: Annotated[str, Field(description="The forgotten memory's id.")]) -> dict[str, object]:
        """Bring back a memory forgotten with memory_forget."""
        memory = _call(client.recover, memory_id)
        return {"id": memory.get("id", memory_id), "is_deleted": bool(memory.get("is_deleted", False))}

    @server.tool()
    def memory_feedback(
        scores: Annotated[dict[str, float], Field(
            description="memory id → score from -1 (harmful) through 0 (not used) to 1 (shaped your answer).")],
        session_key: Annotated[str | None, Field(
            description="Leave empty: the ratings go to the latest session these memories were offered in.")] = None,
    ) -> dict[str, object]:
        """Rate memories you were given, so recall learns what helps. Returns how many ratings were applied,
        ignored (memories no session was offered) and the session they went to."""
        clean = {k: max(-1.0, min(1.0, float(v))) for k, v in scores.items()}
        return _call(client.memory_feedback, session_key, clean)

    @server.tool()
    def code_impact(
        target: Annotated[str, Field(description="`path`, `path:symbol` or a dotted name, relative to the indexed root.")],
        project: Annotated[str | None, Field(description="The indexed project (default: the only one).")] = None,
        depth: Annotated[int, Field(ge=1, le=10, description="How many dependency hops to follow.")] = 3,
    ) -> dict[str, object]:
        """What breaks if TARGET changes: dependents (with depth and path), covering tests and linked
        memories. TARGET is `path`, `path:symbol` or a dotted name, relative to the indexed root."""
        params: dict[str, str | int] = {"target": target, "depth": max(1, min(int(depth), 10))}
        if project:
            params["project"] = project
        return _call(client.request, "GET", "/api/code/impact", params=params)

    return server


def _announce(client: KenningClient) -> str | None:
    """Tell the daemon an MCP server is connected in this directory, so the prompts of sessions
    here ask for ratings through memory_feedback instead of the tag (sessions.mcp_clients); its
    token, or None when the daemon cannot be reached (the prompts then keep the tag)."""
    try:
        answer = client.request("POST", "/api/feedback/clients", json={"cwd": os.getcwd()}, timeout=5.0)
    except (KenningError, OSError):
        return None
    token = answer.get("token")
    return token if isinstance(token, str) else None


def serve_stdio(base_url: str, token: str | None = None, timeout: float = 30.0) -> None:
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per tool call is noise
    client = KenningClient(base_url, token=token, timeout=timeout)
    announced = _announce(client)
    try:
        build_server(client).run("stdio")
    finally:
        if announced:
            try:
                client.request("DELETE", f"/api/feedback/clients/{announced}")
            except (KenningError, OSError):
                pass  # the daemon is gone: so is what it knew
        client.close()
