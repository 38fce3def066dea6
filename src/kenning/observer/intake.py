"""Reading a tool's response, and the generic observe API's events.

`read_result` is the one reading of a tool response in any harness's shape (a dict with exit codes /
stdout / stderr, or a string) into its text and whether it failed: an error when the harness says so
(`is_error`, `error`, a non-zero exit code, `interrupted`) or, for Bash, when its output carries a
recognisable error line. It runs where a tool result is built from what a caller sent — the post-tool-use
route (`hookservice.tool_result_from_body`) and /api/observe (`tool_event`) — so the observer takes the
event's verdict and never decides again (issue 34).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from kenning.core import events
from kenning.core.errors import InvalidInput

MAX_RESULT_CHARS = 8000
MAX_TEXT_CHARS = 20_000
EVENT_TYPES = ("tool-call", "tool-result", "reasoning", "step-complete")
_TOOL_NAME = re.compile(r"^[\w.:\-]{1,100}$")
_BASH_ERROR = re.compile(
    r"Traceback \(most recent call last\)|\b\w+(?:Error|Exception):|^error(?:\[\w+\])?:|\bFAILED\b|^fatal:|"
    r"npm ERR!|command not found|exit code [1-9]|\bpanicked at\b|^--- FAIL|^FAIL\b",
    re.IGNORECASE | re.MULTILINE,
)


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


def result_text(response: object) -> tuple[str, bool]:
    """(text, harness-reported error) of a tool_response in any of its shapes."""
    if response is None:
        return "", False
    if isinstance(response, str):
        return response[:MAX_RESULT_CHARS], False
    if isinstance(response, list):
        return json.dumps(response, default=str)[:MAX_RESULT_CHARS], False
    if not isinstance(response, dict):
        return str(response)[:MAX_RESULT_CHARS], False
    failed = bool(response.get("is_error") or response.get("isError") or response.get("interrupted")
                  or response.get("error"))
    code = response.get("exit_code", response.get("exitCode", response.get("returncode")))
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        failed = True
    parts = [str(response[k]) for k in ("stdout", "stderr", "error", "output", "content", "result") if response.get(k)]
    if "filenames" in response and isinstance(response["filenames"], list):
        parts.append("\n".join(str(f) for f in response["filenames"]))
    text = "\n".join(parts) if parts else json.dumps(response, default=str)
    return text[:MAX_RESULT_CHARS], failed


def read_result(tool: str | None, response: object) -> tuple[str, bool]:
    """(text, failed) of a tool's response: `result_text`, and for Bash an output that carries an error line."""
    text, failed = result_text(response)
    if tool == "Bash" and not failed and _BASH_ERROR.search(text):
        failed = True
    return text, failed


def tool_name(name: str | None) -> str:
    """A tool's name as the scratchpad keys it ('unknown' when none); InvalidInput when it is not a short name."""
    return _tool({"tool_name": name})


def tool_event(body: Mapping[str, object]) -> ToolEvent:
    """A generic observe API body (tool-call / tool-result) as one ToolEvent."""
    key = session_key(body)
    tool = _tool(body)
    args = _args(body, "tool_input") or _args(body, "args")
    text, failed = read_result(tool, body.get("result"))
    if body.get("is_error") is True:
        failed = True
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
