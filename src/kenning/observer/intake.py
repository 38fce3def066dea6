"""The generic observe API's events (/api/observe), read into ToolEvents.

Whether a tool failed is decided where the caller's payload is read (core.tool_outcome, issue 34): the hook
adapters send their verdict; /api/observe takes the caller's `is_error` when it sends one, else reads its
`result` by the same rule (`tool_event`). The observer takes the event's verdict and never decides again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from kenning.core import events, tool_outcome
from kenning.core.errors import InvalidInput

MAX_RESULT_CHARS = tool_outcome.MAX_RESULT_CHARS
MAX_TEXT_CHARS = 20_000
EVENT_TYPES = ("tool-call", "tool-result", "reasoning", "step-complete")
_TOOL_NAME = re.compile(r"^[\w.:\-]{1,100}$")
_BASH_ERROR = tool_outcome.bash_error_pattern()  # (bench/observer_real_cli.py reads it)


@dataclass
class ToolEvent:
    session_key: str
    tool: str
    args: dict[str, object] = field(default_factory=dict)
    result: str = ""
    is_error: bool = False
    cwd: str | None = None
    project: str | None = None
    session_type: str | None = None


def session_key(body: Mapping[str, object]) -> str:
    """The one session-key rule (core.events.session_key); Claude Code names it `session_id`."""
    return events.session_key(body.get("session_key", body.get("session_id")))


def _opt(body: Mapping[str, object], name: str, limit: int = 4096) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise InvalidInput(f"{name} must be a string of at most {limit} characters")
    return value


def _tool(body: Mapping[str, object]) -> str:
    tool = body.get("tool_name", "")
    if tool in (None, ""):
        return "unknown"
    if not isinstance(tool, str) or not _TOOL_NAME.match(tool):
        raise InvalidInput("tool_name must be a short tool name (letters, digits, . _ : -)")
    return tool


def _args(body: Mapping[str, object], name: str) -> dict[str, object]:
    value = body.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidInput(f"{name} must be a JSON object")
    return value


def tool_name(name: str | None) -> str:
    """A tool's name as the scratchpad keys it ('unknown' when none); InvalidInput when it is not a short name."""
    return _tool({"tool_name": name})


def tool_event(body: Mapping[str, object]) -> ToolEvent:
    """A generic observe API body (tool-call / tool-result) as one ToolEvent."""
    key = session_key(body)
    tool = _tool(body)
    args = _args(body, "tool_input") or _args(body, "args")
    text, failed = tool_outcome.verdict(tool, body.get("result"), body.get("is_error"), None)
    return ToolEvent(key, tool, args, text, failed, cwd=_opt(body, "cwd"), project=_opt(body, "project", 500),
                     session_type=_opt(body, "session_type", 50))


def event_type(body: Mapping[str, object]) -> str:
    kind = body.get("type")
    if kind not in EVENT_TYPES:
        raise InvalidInput(f"type must be one of: {', '.join(EVENT_TYPES)}")
    return kind


def reasoning_text(body: Mapping[str, object]) -> str:
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("text must be a non-empty string for a reasoning event")
    return text[:MAX_TEXT_CHARS]
