"""A hook event's one shape in (issue 34): the session-start body every adapter builds is the JSON form of
core.events.SessionStarted, and the daemon reads it straight into that event (no route model between); a tool
step's body (in the harness's shape) is read straight into the ToolResult, by the reading a spooled dict goes
through too."""

from __future__ import annotations

import dataclasses
import tempfile
import typing

import pytest
from pydantic import TypeAdapter, ValidationError

from kenning.api.app import create_app
from kenning.api.routes.hooks import post_tool_use
from kenning.core.config import load_settings
from kenning.core.errors import InvalidInput
from kenning.core.events import Harness, SessionStarted, ToolResult
from kenning.hooks import wire
from kenning.hooks.adapters import claude_code, codex, copilot, gemini, opencode
from kenning.hooks.adapters.hookrun import Context
from kenning.hooks.transport import Deadline
from kenning.hookservice import ToolStep, tool_result_from_body

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


def test_the_post_tool_use_route_reads_its_body_into_the_tool_result():
    with tempfile.TemporaryDirectory() as home:  # the app is built, never started
        schema = create_app(load_settings(environ={"KENNING_HOME": home})).openapi()
    body = schema["paths"]["/api/hooks/post-tool-use"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/ToolStepBody"}  # the wire, in the harness's shape
    assert "PostToolUseIn" not in schema["components"]["schemas"]
    assert set(wire.ToolUseBody.__annotations__) <= set(schema["components"]["schemas"]["ToolStepBody"]["properties"])
    assert typing.get_type_hints(post_tool_use)["event"] is ToolResult  # the handler holds the event, nothing else


def test_a_tool_steps_body_and_a_spooled_dict_are_one_reading():
    bodies = [
        {"session_id": " t1 ", "harness": "claude-code", "tool_name": "Bash", "tool_input": {"command": "make"},
         "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False}, "is_error": False, "cwd": "/w",
         "tool_use_id": "u1", "timestamp": "2026-01-02T03:04:05+02:00", "session_type": "main"},
        {"session_key": "t2", "harness": "claude-code", "tool_name": "Edit", "tool_input": {"file_path": "/a.py"},
         "is_error": True, "error": "Exit code 2"},  # Claude Code's PostToolUseFailure
        {"session_key": "t3", "tool_name": "Bash", "result": "Traceback (most recent call last):\nKeyError: 'x'"},
        {"session_key": "t4", "tool_name": "Read", "tool_response": "text", "success": False},  # a generic caller
    ]
    read = TypeAdapter(ToolStep)  # what the route does with the JSON it receives
    events = [read.validate_python(sent) for sent in bodies]
    assert events == [tool_result_from_body(sent) for sent in bodies]
    assert all(type(event) is ToolResult for event in events)
    first = events[0]
    assert (first.session_key, first.timestamp, first.success, first.output, first.session_type) == (
        "t1", "2026-01-02T01:04:05.000Z", True, "ok", "main")
    assert (events[1].success, events[1].error, events[1].harness) == (False, "Exit code 2", Harness.CLAUDE_CODE)
    assert not events[2].success  # no verdict sent: the output read
    assert not events[3].success
    for bad in ({"tool_name": "Bash"}, {"session_id": "s", "is_error": "yes"},
                {"session_id": "s", "tool_name": "x" * 201},
                {"session_id": "s", "tool_response": 3}):
        with pytest.raises(ValidationError):
            read.validate_python(bad)
        with pytest.raises(InvalidInput):
            tool_result_from_body(bad)
