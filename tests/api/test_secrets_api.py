"""Secrets never stored in clear (issue 12 item 3), against real daemons over HTTP, the CLI and MCP.

Every write path — remember, batch import, CLI import, edit, MCP, documents, session transcripts,
checkpoints — stores `[REDACTED:kind]` instead of the secret; the knowledge graph, export and the
API never show one; and the database files themselves do not contain the bytes. With
`secrets: reject` the write is refused (400 / CLI exit 2) naming the kind, never the value.
"""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

KENNING = str(Path(sys.executable).with_name("kenning"))


def _rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(random.choice(alphabet) for _ in range(n))


def fresh_secrets() -> dict[str, str]:
    """Unique fake secrets of each headline kind (unique so dedupe never hides a write)."""
    return {
        "aws-key": "AKIA" + _rand(16, string.ascii_uppercase + string.digits),
        "github-token": "ghp_" + _rand(36),
        "openai-key": "sk-proj-" + _rand(40),
        "slack-token": f"xoxb-{random.randint(10**11, 10**12)}-{_rand(24, string.ascii_lowercase + string.digits)}",
        "url-password": "Pw" + _rand(14),
        "private-key": "MII" + _rand(60),
    }


def _texts(s: dict[str, str]) -> list[str]:
    return [
        f"Deploy uses the AWS key {s['aws-key']} for the staging bucket",
        f"CI pushes with GITHUB_TOKEN={s['github-token']} from the release job",
        f"The summariser calls OpenAI with {s['openai-key']}",
        f"Alerts post to Slack using {s['slack-token']}",
        f"Billing reads amqp://billing:{s['url-password']}@db.internal:5432/billing",
        f"Old deploy key:\n-----BEGIN RSA PRIVATE KEY-----\n{s['private-key']}\n-----END RSA PRIVATE KEY-----",
    ]


def _db_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(home.glob("memories.db*")) if p.is_file())


def _cli(daemon, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    env = {**os.environ, "KENNING_HOME": str(daemon.home), "KENNING_PORT": str(daemon.port)}
    return subprocess.run([sys.executable, "-m", "kenning", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def run_mcp(fn, *args):
    """An MCP client coroutine run in its own thread and event loop (another test on this worker,
    e.g. a session-scoped Playwright, may own this thread's loop)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, fn, *args).result()


async def _mcp_store(env: dict[str, str], content: str, project: str) -> dict:
    params = StdioServerParameters(command=KENNING, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("memory_store", {"content": content, "project": project})
            assert not result.is_error, result.content
            data = result.structured_content or json.loads(result.content[0].text)
            return data.get("result", data)


def test_every_write_path_redacts_and_nothing_shows_the_secret(daemon, tmp_path):
    project = f"secrets-{uuid.uuid4().hex[:8]}"
    s = fresh_secrets()
    texts = _texts(s)
    with daemon.client() as client:
        ids = []
        for text in texts[:3]:  # remember
            r = client.post("/api/memory/remember", json={"content": text, "project": project,
                                                          "tags": ["ops", f"token={s['github-token']}"]})
            assert r.status_code == 200, r.text
            ids.append(r.json()["id"])
        batch = client.post("/api/memory/batch", json={"memories": [  # the HTTP import route
            {"content": texts[3], "project": project, "metadata": {"env": f"SLACK={s['slack-token']}"}}]})
        assert batch.status_code == 200, batch.text
        ids.append(batch.json()["results"][0]["id"])
        jsonl = tmp_path / "import.jsonl"  # the CLI import
        jsonl.write_text(json.dumps({"content": texts[4], "project": project}) + "\n")
        out = _cli(daemon, "import", str(jsonl))
        assert out.returncode == 0, out.stderr
        edited = client.patch(f"/api/memory/{ids[0]}", json={"content": texts[5]})  # edit
        assert edited.status_code == 200 and s["private-key"] not in edited.json()["content"]
        assert "[REDACTED:private-key]" in edited.json()["content"]
        mcp = run_mcp(_mcp_store, {**os.environ, **daemon.env},  # MCP
                      f"MCP note: rotate {s['aws-key']} monthly", project)
        doc = client.post("/api/documents", json={  # documents
            "text": f"Runbook. Connect with amqp://ops:{s['url-password']}@db:5432/ops then migrate.",
            "title": "runbook", "project": project, "wait": True})
        assert doc.status_code == 200, doc.text
        key = f"sess-{uuid.uuid4().hex}"  # session transcript + checkpoint
        transcript = json.dumps({"type": "user", "message": {"role": "user", "content":
                                 f"We decided to always use the token {s['github-token']} for releases."}})
        assert client.post("/api/hooks/session-start", json={"session_key": key, "project": project}).status_code == 200
        assert client.post("/api/hooks/checkpoint", json={
            "session_key": key, "context": f"export OPENAI_API_KEY={s['openai-key']}"}).status_code == 200
        assert client.post("/api/hooks/session-end", json={
            "session_key": key, "transcript": transcript, "wait": True}).status_code == 200

        listed = client.get("/api/memory", params={"project": project, "limit": 100}).json()["items"]
        shown = json.dumps(listed) + json.dumps([client.get(f"/api/memory/{m['id']}").json() for m in listed])
        shown += client.get(f"/api/sessions/{key}/transcript").text
        shown += json.dumps(client.get(f"/api/sessions/{key}").json())
        shown += json.dumps(client.get("/api/graph/entities", params={"limit": 500}).json())
        shown += json.dumps(client.get(f"/api/documents/{doc.json()['id']}", params={"chunks": "true"}).json())
        shown += json.dumps(mcp)
        export = tmp_path / "export.json"
        assert _cli(daemon, "export", "--out", str(export), "-p", project).returncode == 0
        shown += export.read_text()
    assert len(listed) >= 7
    for kind in ("aws-key", "github-token", "openai-key", "slack-token", "url-password", "private-key"):
        assert f"[REDACTED:{kind}]" in shown, kind
    raw = _db_bytes(daemon.home)
    for kind, secret in s.items():
        assert secret not in shown, f"{kind} shown by the API/CLI"
        assert secret.encode() not in raw, f"{kind} stored in the database files"


def test_reject_policy_refuses_naming_the_kind(daemon_factory, tmp_path):
    daemon = daemon_factory("secrets: reject\n")
    s = fresh_secrets()
    with daemon.client() as client:
        r = client.post("/api/memory/remember", json={"content": f"key {s['aws-key']}"})
        assert r.status_code == 400 and "aws-key" in r.json()["error"] and s["aws-key"] not in r.text
        batch = client.post("/api/memory/batch", json={"memories": [
            {"content": "a harmless fact about Redis"}, {"content": f"push with {s['github-token']}"}]})
        assert batch.status_code == 400 and "memory 2 of 2" in batch.json()["error"]
        assert "github-token" in batch.json()["error"] and s["github-token"] not in batch.text
        doc = client.post("/api/documents", json={"text": f"use {s['openai-key']}", "wait": True})
        assert doc.status_code == 400 and "openai-key" in doc.json()["error"]
        assert client.get("/api/memory").json()["total"] == 0
    out = _cli(daemon, "remember", f"broker at amqp://u:{s['url-password']}@h/db")
    assert out.returncode == 2 and "url-password" in out.stderr and s["url-password"] not in out.stderr + out.stdout
    assert s["aws-key"].encode() not in _db_bytes(daemon.home)
