"""The observer over real HTTP: the post-tool-use hook for every tool kind, the generic event API,
the Claude Code hook client, bad input, and a daemon restart mid-session."""

from __future__ import annotations

import json
import signal
import time

from kenning.hooks.claude_code import handle
from bench.harnesses.daemon import free_port, start_daemon

CWD = "/work/httpapp"
TOOLS = [
    ("Read", {"file_path": f"{CWD}/src/a.py"}, {"type": "text", "file": {"filePath": f"{CWD}/src/a.py"}}),
    ("Edit", {"file_path": f"{CWD}/src/a.py", "old_string": "a", "new_string": "b"}, {"filePath": f"{CWD}/src/a.py"}),
    ("Write", {"file_path": f"{CWD}/src/new.py", "content": "x = 1\n"}, {"type": "create"}),
    ("MultiEdit", {"file_path": f"{CWD}/src/a.py", "edits": [{"old_string": "b", "new_string": "c"}]}, None),
    ("Bash", {"command": "pytest -q"}, {"stdout": "ERROR: boom\nValueError: x", "stderr": "", "exit_code": 1}),
    ("Grep", {"pattern": "def main"}, {"filenames": [f"{CWD}/src/a.py"], "numFiles": 1}),
    ("Glob", {"pattern": "**/*.py"}, {"filenames": [f"{CWD}/src/a.py"]}),
    ("WebFetch", {"url": "https://example.com/doc", "prompt": "read"}, "the doc"),
    ("WebSearch", {"query": "sqlite wal"}, [{"title": "WAL"}]),
    ("Task", {"description": "explore", "prompt": "find x"}, "found x"),
    ("mcp__thing__do", {"anything": [1, 2]}, {"weird": {"nested": True}}),
]

def test_post_tool_use_accepts_every_tool_kind(daemon):
    with daemon.client() as c:
        for tool, tool_input, response in TOOLS:
            r = c.post("/api/hooks/post-tool-use", json={"session_key": "h-all", "tool_name": tool,
                                                        "tool_input": tool_input, "tool_response": response,
                                                        "cwd": CWD})
            assert r.status_code == 200, (tool, r.text)
            assert r.json()["inject"] == "" and r.json()["memory_ids"] == []
        r = c.post("/api/hooks/post-tool-use", json={"session_key": "h-all"})  # no tool name at all
        assert r.status_code == 200
        live = c.get("/api/observer/sessions/h-all").json()["live"]
        assert live["step"] == len(TOOLS) + 1 and live["edited"] == 2 and live["open_errors"] == 1

def test_bad_payloads_are_clear_400s(daemon):
    with daemon.client() as c:
        cases = [
            ({"tool_name": "Read"}, "session_key"),
            ({"session_key": "h-bad", "tool_name": "Read", "tool_input": "not an object"}, "tool_input"),
            ({"session_key": "h-bad", "tool_name": "Read; rm -rf /"}, "tool_name"),
            ({"session_key": "h-bad", "tool_name": "Read", "cwd": 5}, "cwd"),
        ]
        for body, word in cases:
            r = c.post("/api/hooks/post-tool-use", json=body)
            assert r.status_code == 400 and word in r.json()["error"], (body, r.text)
        r = c.post("/api/hooks/post-tool-use", content=b"[1, 2]", headers={"content-type": "application/json"})
        assert r.status_code == 400 and "JSON object" in r.json()["error"]
        r = c.post("/api/observe", json={"session_key": "h-bad", "type": "reasoning"})
        assert r.status_code == 400 and "text" in r.json()["error"]
        r = c.post("/api/observe", json={"session_key": "h-bad", "type": "telepathy"})
        assert r.status_code == 400 and "tool-call" in r.json()["error"]
        assert c.get("/api/observer/sessions/never-seen").status_code == 404

def test_generic_observe_api_pairs_calls_and_results(daemon):
    with daemon.client() as c:
        events = [
            {"type": "tool-call", "tool_name": "Bash", "args": {"command": "cargo test"}},
            {"type": "tool-result", "tool_name": "Bash", "result": "error[E0425]: cannot find value `x`",
             "is_error": True},
            {"type": "reasoning", "text": "Let me try a different approach: the macro cannot see `x`."},
            {"type": "step-complete"},
        ]
        for event in events:
            r = c.post("/api/observe", json={"session_key": "h-gen", "cwd": CWD, **event})
            assert r.status_code == 200, r.text
        live = c.get("/api/observer/sessions/h-gen").json()["live"]
        assert live["step"] == 1 and live["open_errors"] == 1 and "dead_end" in live["signals"]
        status = c.get("/api/observer/status").json()
        assert status["counters"]["events"] >= 4 and status["observe_ms_p95"] is not None

def test_hook_client_never_fails_the_agent(daemon):
    env = {"KENNING_URL": daemon.base_url, "KENNING_HOME": str(daemon.home)}
    payload = {"session_id": "h-client", "cwd": CWD, "hook_event_name": "PostToolUse", "tool_name": "Read",
               "tool_input": {"file_path": f"{CWD}/src/a.py"}, "tool_response": {"type": "text"}}
    assert handle("post-tool-use", json.dumps(payload), env) == ""  # nothing to tell: prints nothing
    with daemon.client() as c:
        assert c.get("/api/observer/sessions/h-client").json()["live"]["step"] == 1
    dead = {"KENNING_URL": f"http://127.0.0.1:{free_port()}", "KENNING_HOOK_TIMEOUT": "0.5"}
    assert handle("post-tool-use", json.dumps(payload), dead) == ""  # daemon down
    assert handle("post-tool-use", "{not json", env) == ""  # bad payload
    assert handle("post-tool-use", json.dumps({**payload, "tool_name": "Nope!!"}), env) == ""  # 400 from daemon
    assert handle("post-tool-use", json.dumps({**payload, "tool_name": "BrandNewTool"}), env) == ""

def test_restart_mid_session_keeps_the_scratchpad_checkpoint(tmp_path):
    home = tmp_path / "restart-home"
    config = "observer:\n  checkpoint_interval_s: 0.5\n"
    first = start_daemon(home, config)
    try:
        with first.client() as c:
            for i in range(3):
                c.post("/api/hooks/post-tool-use", json={"session_key": "h-restart", "tool_name": "Grep",
                                                        "tool_input": {"pattern": "def flaky"}, "cwd": CWD})
            c.post("/api/hooks/post-tool-use", json={
                "session_key": "h-restart", "tool_name": "Bash", "tool_input": {"command": "make test"},
                "tool_response": {"stderr": "KeyError: 'tenant'", "exit_code": 2}, "cwd": CWD})
        time.sleep(2.0)  # past the checkpoint interval
    finally:
        first.proc.send_signal(signal.SIGKILL)  # a crash: no graceful flush
        first.proc.wait()
    second = start_daemon(home)
    try:
        with second.client() as c:
            live = c.get("/api/observer/sessions/h-restart").json()["live"]
            assert live["step"] == 4 and live["open_errors"] == 1
            r = c.post("/api/hooks/post-tool-use", json={"session_key": "h-restart", "tool_name": "Read",
                                                        "tool_input": {"file_path": f"{CWD}/src/flaky.py"}})
            assert r.status_code == 200
            assert c.get("/api/observer/sessions/h-restart").json()["live"]["step"] == 5
            ended = c.post("/api/observer/sessions/h-restart/end", json={"wait": True}).json()
            assert ended["steps"] == 5 and ended["signals"] >= 1
            signals = c.get("/api/observer/sessions/h-restart").json()["signals"]
            assert any(s["signal_class"] == "repeated_grep" and s["key"] == "def flaky" for s in signals)
    finally:
        second.stop()


def test_show_carries_trust_and_lifecycle(daemon):
    with daemon.client() as c:
        created = c.post("/api/memory/remember", json={"content": "work state: halfway through the importer rewrite",
                                              "type": "work_state", "project": "httpapp"}).json()
        life = c.get(f"/api/memory/{created['id']}").json()["lifecycle"]
        assert life["trust"] == "new" and life["half_life_days"] == 7.0 and life["prunes_after"]
        run = c.post("/api/observer/lifecycle/run").json()
        assert {"soft_deleted", "confidence_raised", "review_cleared"} <= set(run)
