"""The harness-neutral event model (issue 23): typed, frozen, one session-key rule, a wire form."""

from dataclasses import FrozenInstanceError

import pytest

from kenning.core.errors import InvalidInput
from kenning.core.events import (
    Harness, PromptSubmitted, SessionEnded, SessionStarted, ToolResult, Turn, event_from_dict, event_to_dict,
    harness_of, session_key, strip_harness_text,
)
from kenning.sessions.transcript import Turn as SessionsTurn


def test_events_are_frozen_and_round_trip_through_their_wire_form():
    event = ToolResult(session_key="s1", harness=Harness.CLAUDE_CODE, tool_name="Bash",
                       tool_input={"command": "pytest"}, success=False, error="Exit code 1")
    with pytest.raises(FrozenInstanceError):
        event.success = True  # type: ignore[misc]
    wire = event_to_dict(event)
    assert wire["kind"] == "tool_result" and wire["harness"] == "claude-code"
    assert event_from_dict(wire) == event
    ended = SessionEnded(session_key="s1", reason="exit", turns=(Turn("user", "hi"),))
    assert event_from_dict(event_to_dict(ended)).turns == (Turn("user", "hi"),)


def test_one_session_key_rule():
    assert session_key("  abc ") == "abc"
    assert session_key("x" * 200) == "x" * 200
    # 201: too long; a short key padded past the schemas' maxLength (what the fuzzer sent to session-end)
    for bad in ("", "   ", "\u200b", None, 3, "x" * 201, "k" + " " * 200):
        with pytest.raises(InvalidInput):
            session_key(bad)
    with pytest.raises(InvalidInput, match="unknown event kind"):
        event_from_dict({"kind": "nope", "session_key": "s"})
    with pytest.raises(InvalidInput):
        event_from_dict({"kind": "prompt_submitted", "session_key": "s"})  # prompt missing


def test_harness_names_and_turn_seam():
    assert harness_of("Claude Code") is Harness.CLAUDE_CODE and harness_of("gemini-cli") is Harness.GEMINI
    assert harness_of("vim") is Harness.GENERIC
    assert SessionsTurn is Turn and Turn("user", "x").tool_name is None
    assert SessionStarted(session_key="s").kind == "session_started"
    assert PromptSubmitted(session_key="s", prompt="p").memory_feedback == {}


def test_strip_harness_text_removes_reminders_and_kenning_blocks():
    text = ("fix the login bug\n<system-reminder>\n# gitStatus\nmain</system-reminder>\n"
            "<kenning-memories>\n- use redis\n</kenning-memories>\n<memory-feedback>{\"a\": 1}</memory-feedback>")
    assert strip_harness_text(text) == "fix the login bug"
    assert strip_harness_text("keep <b>this</b> <system-reminder>cut to the end") == "keep <b>this</b>"
