"""The JSON a hook process handles, by edge (typing only: the hook modules import this under
TYPE_CHECKING, so a hook's start never loads `typing`).

    harness → hook      `Payload`: the harness's stdin JSON object. Untrusted (any harness, any
                        version, any shape): every field is read with an isinstance check
                        (`hookrun.string`, `neutral_tool`, `tool_outcome` …).
    hook → daemon       `Request`: an API path and its body, one TypedDict per hook route.
    daemon → hook       `Answer`: the decoded JSON object the daemon answered (read with isinstance:
                        `hookrun.inject_of`).
    hook → harness      what `render` prints: `HookSpecificOutput` (Claude Code, Codex, Gemini CLI),
                        `OpenCodeOutput` or `CopilotOutput`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NotRequired, TypedDict, Union, final

__all__ = [
    "Payload", "Answer", "ToolOutput", "ToolResponse", "SessionStartBody", "PromptBody", "ToolUseBody",
    "CompactionBody", "FeedbackBody", "SessionEndBody", "RequestBody", "Request", "AdditionalContext",
    "HookSpecificOutput", "OpenCodeOutput", "CopilotOutput",
]

Payload = Mapping[str, object]  # a harness's hook JSON object: untrusted, narrowed field by field
Answer = Mapping[str, object]  # the daemon's decoded JSON object


# -- hook → daemon: one body per /api/hooks route ------------------------------------------------
class ToolOutput(TypedDict):
    """A tool's response as the shared runner sends it (Codex, Gemini CLI, OpenCode)."""

    output: str
    exit_code: NotRequired[int]


# what `tool_response` holds: the runner's ToolOutput, Claude Code's response (a dict of scalars, or text)
ToolResponse = Union[ToolOutput, Mapping[str, object], str, None]


@final  # (final: `"transcript" in body` tells the bodies apart)
class SessionStartBody(TypedDict):
    session_key: str
    harness: str
    project: str | None
    cwd: str | None
    source: str
    transcript_path: str | None
    context: NotRequired[str | None]


@final
class PromptBody(TypedDict):
    session_key: str
    prompt: str
    # Copilot CLI: its prompt may reach the daemon before session start; the row it makes gets these
    harness: NotRequired[str]
    project: NotRequired[str | None]
    cwd: NotRequired[str | None]


@final
class ToolUseBody(TypedDict):
    session_key: str
    harness: str
    tool_name: str | None
    tool_input: Mapping[str, object] | None  # the call's arguments, as the harness sent them (renamed)
    tool_response: NotRequired[ToolResponse]  # absent for Claude Code's PostToolUseFailure
    cwd: str | None
    tool_use_id: str | None
    is_error: NotRequired[bool]  # the verdict: every adapter sends it (core.tool_outcome); the daemon takes it as given
    error: NotRequired[str]  # a failed tool: what it said


@final
class CompactionBody(TypedDict):
    session_key: str
    trigger: str
    context: NotRequired[str | None]
    transcript: NotRequired[str | None]
    transcript_refused: NotRequired[str]  # the confined reader's reason, in place of the transcript


@final
class FeedbackBody(TypedDict):
    session_key: str
    memory_feedback: dict[str, float]


@final
class SessionEndBody(TypedDict):
    session_key: str
    transcript: str | None
    reason: str | None
    transcript_refused: NotRequired[str]


RequestBody = Union[SessionStartBody, PromptBody, ToolUseBody, CompactionBody, FeedbackBody, SessionEndBody]
Request = tuple[str, RequestBody]  # (API path, body)


# -- hook → harness: what it prints ---------------------------------------------------------------
class AdditionalContext(TypedDict):
    hookEventName: str
    additionalContext: str


class HookSpecificOutput(TypedDict):
    """Claude Code, Codex and Gemini CLI read the injection from here."""

    hookSpecificOutput: AdditionalContext


class OpenCodeOutput(TypedDict):
    """What kenning's OpenCode plugin reads back (it adds the text to the system prompt)."""

    additionalContext: str


class CopilotOutput(TypedDict):
    """GitHub Copilot CLI reads `additionalContext` of sessionStart and userPromptSubmitted."""

    additionalContext: str
