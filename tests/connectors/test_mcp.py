"""`kenning mcp` over stdio with the official MCP SDK client, against a real daemon."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

KENNING = str(Path(sys.executable).with_name("kenning"))
TOOLS = {"memory_search", "memory_store", "memory_get", "memory_forget", "memory_feedback"}


def _payload(result) -> object:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if isinstance(data, dict) and set(data) == {"result"} else data
    return json.loads(result.content[0].text)


async def _exercise(env: dict[str, str], project: str) -> dict:
    params = StdioServerParameters(command=KENNING, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name for t in (await session.list_tools()).tools}
            stored = _payload(await session.call_tool("memory_store", {
                "content": "The staging database is reset every Sunday at 02:00 UTC",
                "type": "fact", "importance": 0.8, "project": project, "tags": ["staging"]}))
            found = _payload(await session.call_tool("memory_search", {
                "query": "when is the staging database reset", "project": project, "limit": 5}))
            got = _payload(await session.call_tool("memory_get", {"memory_id": stored["id"]}))
            feedback = _payload(await session.call_tool("memory_feedback", {
                "session_key": f"mcp-{uuid.uuid4().hex}", "scores": {stored["id"]: 0.5}}))
            forgotten = _payload(await session.call_tool("memory_forget", {"memory_id": stored["id"]}))
            missing = await session.call_tool("memory_get", {"memory_id": "does-not-exist"})
            return {"tools": tools, "stored": stored, "found": found, "got": got, "feedback": feedback,
                    "forgotten": forgotten, "missing": missing}


def test_mcp_client_lists_tools_and_stores_and_searches(daemon):
    env = {**os.environ, **daemon.env}
    project = f"mcp-{uuid.uuid4().hex[:8]}"
    out = anyio.run(_exercise, env, project)
    assert TOOLS <= out["tools"]
    assert out["stored"]["deduped"] is False
    assert out["found"][0]["id"] == out["stored"]["id"] and "Sunday" in out["found"][0]["content"]
    assert out["got"]["project"] == project and out["got"]["tags"] == ["staging"]
    assert out["feedback"] == {"applied": 0, "ignored": 1}  # the id was never injected in that session
    assert out["forgotten"] == {"id": out["stored"]["id"], "is_deleted": True}
    assert out["missing"].is_error and "does-not-exist" in out["missing"].content[0].text
