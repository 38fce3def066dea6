"""`kenning mcp` over stdio with the official MCP SDK client, against a real daemon."""

from __future__ import annotations

import json
import os
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

KENNING = str(Path(sys.executable).with_name("kenning"))
TOOLS = {"memory_search", "memory_store", "memory_get", "memory_forget", "memory_recover", "memory_feedback"}


def _payload(result) -> object:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if isinstance(data, dict) and set(data) == {"result"} else data
    return json.loads(result.content[0].text)


async def _exercise(env: dict[str, str], project: str, offer) -> dict:
    params = StdioServerParameters(command=KENNING, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = (await session.list_tools()).tools
            tools = {t.name for t in listed}
            schemas = {t.name: t.input_schema for t in listed}
            stored = _payload(await session.call_tool("memory_store", {
                "content": "The staging database is reset every Sunday at 02:00 UTC",
                "type": "fact", "importance": 0.8, "project": project, "tags": ["staging"]}))
            bad_type = await session.call_tool("memory_store", {"content": "x", "type": "not-a-type"})
            found = _payload(await session.call_tool("memory_search", {
                "query": "when is the staging database reset", "project": project, "limit": 5}))
            got = _payload(await session.call_tool("memory_get", {"memory_id": stored["id"]}))
            feedback = _payload(await session.call_tool("memory_feedback", {
                "session_key": f"mcp-{uuid.uuid4().hex}", "scores": {stored["id"]: 0.5}}))
            offered_in = offer(stored["id"])  # a hook session is offered the memory; MCP never learns its key
            keyless = _payload(await session.call_tool("memory_feedback", {"scores": {stored["id"]: 0.9}}))
            forgotten = _payload(await session.call_tool("memory_forget", {"memory_id": stored["id"]}))
            recovered = _payload(await session.call_tool("memory_recover", {"memory_id": stored["id"]}))
            missing = await session.call_tool("memory_get", {"memory_id": "does-not-exist"})
            return {"tools": tools, "schemas": schemas, "stored": stored, "bad_type": bad_type, "found": found,
                    "got": got, "feedback": feedback, "offered_in": offered_in, "keyless": keyless,
                    "forgotten": forgotten, "recovered": recovered, "missing": missing}


def test_mcp_client_lists_tools_and_stores_and_searches(daemon):
    env = {**os.environ, **daemon.env}
    project = f"mcp-{uuid.uuid4().hex[:8]}"

    def offer(memory_id: str) -> str:
        key = f"hook-{uuid.uuid4().hex}"
        with daemon.client() as http:
            http.post("/api/hooks/session-start", json={"session_key": key, "project": project}).raise_for_status()
            rows = http.get(f"/api/sessions/{key}").json()["memories"]
        assert memory_id in {r["memory_id"] for r in rows}
        return key

    with ThreadPoolExecutor(1) as pool:  # its own thread: a session-scoped Playwright loop may own this one
        out = pool.submit(anyio.run, _exercise, env, project, offer).result()
    assert TOOLS <= out["tools"]
    for tool in TOOLS:  # every argument is described
        props = out["schemas"][tool]["properties"]
        assert props and all(p.get("description") for p in props.values()), (tool, props)
    type_enum = out["schemas"]["memory_store"]["properties"]["type"]["enum"]
    assert "decision" in type_enum and "gotcha" in type_enum
    assert out["bad_type"].is_error
    assert out["stored"]["deduped"] is False
    top = out["found"][0]
    assert top["id"] == out["stored"]["id"] and "Sunday" in top["content"]
    assert {"bm25", "vector"} <= set(top["legs"]) and all("rank" in v for v in top["legs"].values())
    assert out["got"]["project"] == project and out["got"]["tags"] == ["staging"]
    assert out["feedback"]["applied"] == 0 and out["feedback"]["ignored"] == 1  # never offered in that session
    assert out["keyless"] == {"applied": 1, "ignored": 0, "session_key": out["offered_in"]}
    with daemon.client() as http:
        row = next(r for r in http.get(f"/api/sessions/{out['offered_in']}").json()["memories"]
                   if r["memory_id"] == out["stored"]["id"])
    assert row["agent_feedback_count"] == 1 and row["agent_relevance_score"] == 0.9
    assert out["forgotten"] == {"id": out["stored"]["id"], "is_deleted": True}
    assert out["recovered"] == {"id": out["stored"]["id"], "is_deleted": False}
    assert out["missing"].is_error and "does-not-exist" in out["missing"].content[0].text
