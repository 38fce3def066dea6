"""A hook event's one shape in (issue 34): the session-start body every adapter builds is the JSON form of
core.events.SessionStarted, and the daemon reads it straight into that event (no route model between); a tool
step's typed body becomes the ToolResult with no dict between, read by the rule a spooled dict goes through."""

from __future__ import annotations

import dataclasses
import tempfile

from pydantic import TypeAdapter

from kenning.api.app import create_app
from kenning.api.routes.hooks import PostToolUseIn
from kenning.core.config import load_settings
from kenning.core.events import Harness, SessionStarted
from kenning.hooks import wire
from kenning.hooks.adapters import claude_code, codex, copilot, gemini, opencode
from kenning.hooks.adapters.hookrun import Context
from kenning.hooks.transport import Deadline
from kenning.hookservice import tool_result_from_body

EVENT_FIELDS = {f.name for f in dataclasses.fields(SessionStarted) if f.init}


def _start_body(adapter, event: str, payload: dict, tmp_path) -> dict:
    ctx = Context(Deadline(2.0), {"HOME": str(tmp_path), "KENNING_HOME": str(tmp_path / "k")}, config={})
    [(path, body)] = adapter.requests(event, payload, ctx)
    assert path == "/api/hooks/session-start"
    return body


def test_every_adapters_session_start_body_is_the_events_json_form(tmp_path):
    assert set(wire.SessionStartBody.__annotations__) <= EVENT_FIELDS  # the hook's declaration: the event's keys
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    cwd = str(tmp_path / "repo")
    bodies = {
        "claude-code": _start_body(claude_code, "SessionStart", {"session_id": "s1", "cwd": cwd, "source": "clear",
                                                                 "transcript_path": str(tmp_path / "t.jsonl")},
                                   tmp_path),
        "codex": _start_body(codex, "SessionStart", {"session_id": "s2", "cwd": cwd, "source": "startup"}, tmp_path),
        "gemini": _start_body(gemini, "SessionStart", {"session_id": "s3", "cwd": cwd, "source": "resume"}, tmp_path),
        "opencode": _start_body(opencode, "session.created", {"session_id": "s4", "cwd": cwd}, tmp_path),
        "copilot": _start_body(copilot, "sessionStart", {"sessionId": "s5", "cwd": cwd, "source": "new"}, tmp_path),
    }
    read = TypeAdapter(SessionStarted)
    for harness, body in bodies.items():
        assert set(body) <= EVENT_FIELDS, harness
        event = read.validate_python(body)  # what the route does with the JSON it receives
        assert type(event) is SessionStarted and event.harness == Harness(harness)
        assert {name: getattr(event, name) for name in body} == body, harness  # every value as sent
        assert event.project == "repo"
    assert read.validate_python(bodies["claude-code"]).source == "clear"


def test_the_session_start_route_reads_its_body_as_the_event():
    with tempfile.TemporaryDirectory() as home:  # the app is built, never started
        schema = create_app(load_settings(environ={"KENNING_HOME": home})).openapi()
    body = schema["paths"]["/api/hooks/session-start"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/SessionStarted"}
    assert set(schema["components"]["schemas"]["SessionStarted"]["properties"]) == EVENT_FIELDS
    assert "SessionStartIn" not in schema["components"]["schemas"]


def test_a_tool_steps_typed_body_is_read_by_the_spooled_dicts_rule():
    bodies = [
        {"session_id": " t1 ", "harness": "claude-code", "tool_name": "Bash", "tool_input": {"command": "make"},
         "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False}, "is_error": False, "cwd": "/w",
         "tool_use_id": "u1", "timestamp": "2026-01-02T03:04:05+02:00"},
        {"session_key": "t2", "harness": "claude-code", "tool_name": "Edit", "tool_input": {"file_path": "/a.py"},
         "is_error": True, "error": "Exit code 2"},  # Claude Code's PostToolUseFailure
        {"session_key": "t3", "tool_name": "Bash", "result": "Traceback (most recent call last):\nKeyError: 'x'"},
        {"session_key": "t4", "tool_name": "Read", "tool_response": "text", "success": False},  # a generic caller
    ]
    for sent in bodies:
        typed = PostToolUseIn.model_validate(sent)
        event = typed.event()
        assert event == tool_result_from_body(typed.as_dict())
    first = PostToolUseIn.model_validate(bodies[0]).event()
    assert (first.session_key, first.timestamp, first.success) == ("t1", "2026-01-02T01:04:05.000Z", True)
    assert not PostToolUseIn.model_validate(bodies[1]).event().success
    assert not PostToolUseIn.model_validate(bodies[2]).event().success  # no verdict sent: the output read
    assert not PostToolUseIn.model_validate(bodies[3]).event().success
