"""A tool step's failure is decided once, by the adapter that read the harness's payload (issue 34): every
adapter's post-tool-use body carries `is_error`, and the daemon takes it as given; only a body without one
(the generic HTTP contract) has its response read there, by the same rule (core.tool_outcome)."""

from __future__ import annotations

import json
import subprocess
import uuid

from kenning.hooks.adapters import claude_code, codex, copilot, gemini, hookrun, opencode
from kenning.hooks.adapters.hookrun import Context
from kenning.hooks.install import hook_argv
from kenning.hooks.transport import Deadline

TRACEBACK = "Traceback (most recent call last):\n  File \"app.py\", line 3\nKeyError: 'tenant'"


def _body(adapter, event: str, payload: dict, tmp_path) -> dict:
    ctx = Context(Deadline(2.0), {"HOME": str(tmp_path), "KENNING_HOME": str(tmp_path / "k")}, config={})
    [(path, body)] = adapter.requests(event, payload, ctx)
    assert path == "/api/hooks/post-tool-use"
    return body


def test_every_adapter_sends_its_verdict(tmp_path):
    cc = {"session_id": "v1", "cwd": str(tmp_path), "tool_use_id": "t1"}
    ok = _body(claude_code, "PostToolUse", {**cc, "tool_name": "Read", "tool_input": {"file_path": "/a.py"},
                                            "tool_response": {"type": "text", "file": {"filePath": "/a.py"}}}, tmp_path)
    assert ok["is_error"] is False and "error" not in ok
    bash = _body(claude_code, "PostToolUse", {**cc, "tool_name": "Bash", "tool_input": {"command": "pytest | tail"},
                                              "tool_response": {"stdout": TRACEBACK, "stderr": "",
                                                                "interrupted": False}}, tmp_path)
    assert bash["is_error"] is True and "KeyError: 'tenant'" in bash["error"]  # exit 0, an error line
    stopped = _body(claude_code, "PostToolUse", {**cc, "tool_name": "Bash", "tool_input": {"command": "sleep 99"},
                                                 "tool_response": {"stdout": "", "interrupted": True}}, tmp_path)
    assert stopped["is_error"] is True
    failed = _body(claude_code, "post-tool-use-failure", {**cc, "tool_name": "Bash", "error": "Exit code 2"}, tmp_path)
    assert failed["is_error"] is True and failed["error"] == "Exit code 2"
    shell = {"sessionId": "v2", "cwd": str(tmp_path), "toolName": "bash", "toolArgs": {"command": "make"}}
    exited = _body(copilot, "postToolUse", {**shell, "toolResult": {
        "resultType": "success", "textResultForLlm": "make: *** [all] boom\n<exited with exit code 2>"}}, tmp_path)
    assert exited["is_error"] is True  # Copilot CLI reports it as a success
    exited = _body(copilot, "postToolUse", {**shell, "toolResult": {
        "resultType": "success", "textResultForLlm": "built\n<command completed with exit code 2>"}}, tmp_path)
    assert exited["is_error"] is True and exited["error"].startswith("exit code 2")
    clean = _body(copilot, "postToolUse", {**shell, "toolResult": {
        "resultType": "success", "textResultForLlm": "built\n<command completed with exit code 0>"}}, tmp_path)
    assert clean["is_error"] is False
    gem = {"session_id": "v3", "cwd": str(tmp_path), "tool_name": "run_shell_command", "tool_input": {"command": "x"}}
    assert _body(gemini, "AfterTool", {**gem, "tool_response": {"llmContent": "out\nExit Code: 1"}},
                 tmp_path)["is_error"] is True
    assert _body(gemini, "AfterTool", {**gem, "tool_response": {"llmContent": "out\nExit Code: 0"}},
                 tmp_path)["is_error"] is False
    oc = {"session_id": "v4", "cwd": str(tmp_path), "tool": "bash", "args": {"command": "x"}, "output": "npm ERR! 404"}
    assert _body(opencode, "tool.execute.after", {**oc, "metadata": {"exit": 0}}, tmp_path)["is_error"] is True
    assert _body(opencode, "tool.execute.after", {**oc, "output": "ok", "metadata": {"exit": 0}},
                 tmp_path)["is_error"] is False
    assert _body(opencode, "tool.execute.after", {**oc, "output": "ok", "metadata": {"exit": 3}},
                 tmp_path)["is_error"] is True
    sessions = tmp_path / ".codex" / "sessions"  # Codex's folder (the confined reader reads there)
    sessions.mkdir(parents=True)
    rollout = sessions / "rollout.jsonl"
    rollout.write_text(json.dumps({"payload": {"type": "function_call_output", "call_id": "c1",
                                               "output": "Process exited with code 1\nno such file"}}) + "\n")
    cx = {"session_id": "v5", "cwd": str(tmp_path), "tool_name": "shell", "tool_input": {"command": "cat x"},
          "tool_use_id": "c1", "tool_response": "no such file", "transcript_path": str(rollout)}
    body = _body(codex, "PostToolUse", cx, tmp_path)
    assert body["is_error"] is True and body["error"].startswith("exit code 1"), body
    assert _body(codex, "PostToolUse", {**cx, "tool_use_id": "c2"}, tmp_path)["is_error"] is False
    _, plain = hookrun.tool_use("v6", "codex", "Read", {"file_path": "/a"}, "Error: nothing here", cwd=None)
    assert plain["is_error"] is False  # an error word in a Read is the file's text, not a failure


def test_the_daemon_takes_the_verdict_as_given(daemon):
    key = f"verdict-{uuid.uuid4().hex[:8]}"
    step = {"session_key": key, "harness": "claude-code", "tool_name": "Bash", "tool_input": {"command": "cat log"},
            "tool_response": {"stdout": TRACEBACK, "stderr": ""}, "cwd": "/w/verdict"}
    with daemon.client() as c:
        r = c.post("/api/hooks/post-tool-use", json={**step, "is_error": False})  # the adapter said: it ran fine
        assert r.status_code == 200, r.text
        assert c.get(f"/api/observer/sessions/{key}").json()["live"]["open_errors"] == 0
        r = c.post("/api/hooks/post-tool-use", json={**step, "is_error": True, "error": TRACEBACK})
        assert c.get(f"/api/observer/sessions/{key}").json()["live"]["open_errors"] == 1
        generic = f"{key}-generic"  # a caller that sends no verdict: its response is read (the same rule)
        r = c.post("/api/hooks/post-tool-use", json={**step, "session_key": generic})
        assert r.status_code == 200, r.text
        assert c.get(f"/api/observer/sessions/{generic}").json()["live"]["open_errors"] == 1


def _hook_modules(event: str, payload: dict, env: dict[str, str]) -> set[str]:
    """The modules the installed hook command imported for one Claude Code event (-X importtime)."""
    python, *rest = hook_argv()
    done = subprocess.run([python, "-X", "importtime", *rest, "hook", event], input=json.dumps(payload), env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    return {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:") and line.count("|") == 2}


def test_the_verdict_costs_the_hook_no_json_and_no_re_unless_an_output_may_hold_an_error_line(daemon, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {**daemon.env, "KENNING_HOME": str(home), "KENNING_URL": daemon.base_url, "KENNING_HOOK_VIA": ""}
    step = {"session_id": f"verdict-cost-{uuid.uuid4().hex[:6]}", "cwd": str(tmp_path), "hook_event_name": "PostToolUse"}
    read = {**step, "tool_name": "Read", "tool_input": {"file_path": "/a.py"},
            "tool_response": {"type": "text", "file": {"filePath": "/a.py", "content": "x = 1"}}}
    bash = {**step, "tool_name": "Bash", "tool_input": {"command": "ls"},
            "tool_response": {"stdout": "a.py\nb.py", "stderr": "", "interrupted": False}}
    for payload in (read, bash):
        modules = _hook_modules("post-tool-use", payload, env)
        assert "kenning.core.tool_outcome" in modules  # the probe did judge the step
        assert not modules & {"json", "re", "typing"}, sorted(modules & {"json", "re", "typing"})
    failed = {**bash, "tool_response": {"stdout": TRACEBACK, "stderr": "", "interrupted": False}}
    assert "re" in _hook_modules("post-tool-use", failed, env)  # the error-line rule, only here
