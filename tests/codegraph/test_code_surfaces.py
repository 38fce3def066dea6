"""The code graph's edges against a real daemon: HTTP API, the post-tool-use hook path, the CLI
(`kenning code index|impact --json`) and the `code_impact` MCP tool through the MCP SDK client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from .helpers import write_tree

KENNING = str(Path(sys.executable).with_name("kenning"))
REPO = {
    "shop/__init__.py": "",
    "shop/prices.py": "def tax(x):\n    return x * 0.2\n\ndef total(x):\n    return x + tax(x)\n",
    "shop/cart.py": "from shop.prices import total\n\ndef checkout(items):\n    return sum(total(i) for i in items)\n",
    "tests/test_cart.py": "from shop.cart import checkout\n\ndef test_checkout():\n    assert checkout([1])\n",
}
IMPACT_KEYS = {"project", "target", "depth", "nodes", "dependents", "tests", "memories", "stale_files", "took_ms"}
DEPENDENT_KEYS = {"path", "symbol", "kind", "line", "depth", "edge", "chain"}


@pytest.fixture(scope="module")
def indexed(daemon, tmp_path_factory):
    project = f"shop-{uuid.uuid4().hex[:8]}"
    repo = write_tree(tmp_path_factory.mktemp("repo"), REPO)
    with daemon.client() as http:
        report = http.post("/api/code/index", json={"path": str(repo), "project": project}).json()
    assert report["files"] == 4 and report["parsed"] == 4
    return project, repo


def test_http_impact_and_errors(daemon, indexed):
    project, _ = indexed
    with daemon.client() as http:
        data = http.get("/api/code/impact", params={"target": "shop/prices.py:tax", "project": project}).json()
        assert set(data) == IMPACT_KEYS
        chains = {tuple(d["chain"]) for d in data["dependents"]}
        assert ("shop/cart.py:checkout", "shop/prices.py:total", "shop/prices.py:tax") in chains
        assert [t["symbol"] for t in data["tests"] if t["symbol"]] == ["test_checkout"]
        missing = http.get("/api/code/impact", params={"target": "shop/nope.py:x", "project": project})
        assert missing.status_code == 404 and "nope.py" in missing.json()["error"]
        bad = http.get("/api/code/impact", params={"target": "shop", "project": project, "depth": 0})
        assert bad.status_code == 422 and "depth" in bad.json()["error"]
        unknown = http.get("/api/code/impact", params={"target": "x", "project": "no-such-project"})
        assert unknown.status_code == 404
        around = http.get("/api/code/memories", params={"files": "shop/cart.py", "project": project}).json()
        assert around["files"]["shop/cart.py"] == 0 and around["files"]["shop/prices.py"] == 1
        assert around["memories"] == []


def _dependents_of_tax_once(http, project: str, symbol: str) -> set[str]:
    """The dependents of shop/prices.py:tax, polled until `symbol` is among them (the graph is refreshed in the
    background) or two minutes pass."""
    deadline = time.monotonic() + 120
    symbols: set[str] = set()
    while time.monotonic() < deadline and symbol not in symbols:
        time.sleep(0.2)
        data = http.get("/api/code/impact", params={"target": "shop/prices.py:tax", "project": project,
                                                    "depth": 1}).json()
        symbols = {d["symbol"] for d in data["dependents"]}
    return symbols


def test_edit_tool_event_reindexes_the_file(daemon, indexed):
    project, repo = indexed
    (repo / "shop/cart.py").write_text(
        "from shop.prices import total, tax\n\ndef checkout(items):\n    return sum(total(i) for i in items)\n\n"
        "def refund(x):\n    return tax(x)\n")
    with daemon.client() as http:
        answer = http.post("/api/hooks/post-tool-use", json={
            "session_key": f"s-{uuid.uuid4().hex}", "tool_name": "Edit", "cwd": str(repo),
            "tool_input": {"file_path": str(repo / "shop/cart.py")}}).json()
        assert "code_index" not in answer  # re-indexed off the hook's call (issue 34): the graph catches up
        symbols = _dependents_of_tax_once(http, project, "refund")
    assert "refund" in symbols


def test_session_start_reindexes_files_changed_since(daemon, indexed):
    project, repo = indexed
    (repo / "shop/audit.py").write_text("from shop.prices import tax\n\ndef audit(x):\n    return tax(x)\n")
    with daemon.client() as http:
        http.post("/api/hooks/session-start", json={"session_key": f"s-{uuid.uuid4().hex}", "cwd": str(repo),
                                                    "project": project})
        symbols = _dependents_of_tax_once(http, project, "audit")
    assert "audit" in symbols


def test_cli_index_and_impact_json(tmp_path, unused_port):
    repo = write_tree(tmp_path / "repo", REPO)
    (tmp_path / "home").mkdir()
    env = {**os.environ, "KENNING_HOME": str(tmp_path / "home"), "KENNING_PORT": str(unused_port)}
    out = subprocess.run([KENNING, "code", "index", str(repo), "--project", "shop", "--json"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["project"] == "shop" and report["files"] == 4 and report["closure"] == "full"
    out = subprocess.run([KENNING, "code", "impact", "shop.prices.total", "--json", "--depth", "2"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == IMPACT_KEYS and data["project"] == "shop" and data["depth"] == 2
    assert data["dependents"] and all(set(d) == DEPENDENT_KEYS for d in data["dependents"])
    assert {"checkout"} <= {d["symbol"] for d in data["dependents"]}
    bad = subprocess.run([KENNING, "code", "impact", "shop/missing.py:f"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert bad.returncode == 1 and "missing.py" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


async def _mcp(env: dict[str, str], project: str) -> tuple[set[str], object, object]:
    params = StdioServerParameters(command=KENNING, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name for t in (await session.list_tools()).tools}
            ok = await session.call_tool("code_impact", {"target": "shop/prices.py:total", "project": project})
            bad = await session.call_tool("code_impact", {"target": "nowhere.py", "project": project})
            return tools, ok, bad


def test_mcp_code_impact_tool(daemon, indexed):
    project, _ = indexed
    with ThreadPoolExecutor(1) as pool:  # its own thread: a session-scoped Playwright loop may own this one
        tools, ok, bad = pool.submit(anyio.run, _mcp, {**os.environ, **daemon.env}, project).result()
    assert "code_impact" in tools
    assert not ok.is_error
    data = ok.structured_content if ok.structured_content is not None else json.loads(ok.content[0].text)
    data = data.get("result", data)
    assert data["project"] == project and "checkout" in {d["symbol"] for d in data["dependents"]}
    assert bad.is_error and "nowhere.py" in bad.content[0].text
