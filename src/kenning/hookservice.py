"""The hooks service: one place where a harness event (core.events) meets the observer, the
session lifecycle and the code graph (issue 23).

Every harness reaches it the same way — its adapter (kenning.hooks.adapters.<harness>) turns the
harness's payloads into events, the HTTP routes (api/routes/hooks.py) validate the typed request
and call `HooksService.handle` — so adding a harness adds an adapter and a connector, nothing here.

    session_started  → code index refresh (local viewers) + sessions.session_start (injection)
    prompt_submitted → sessions.user_prompt_submit (injection; memory feedback)
    tool_result      → observer (success or failure, error text) + checkpoint tick + code index
    turn_ended       → memory feedback from `<memory-feedback>` in the last assistant message
    compacted        → a pre-compaction checkpoint (and the transcript's episodes so far)
    session_ended    → sessions.session_end (transcript, episodes, summary) + observer promotion
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NotRequired, TypedDict, Union

from kenning.core.errors import InvalidInput
from kenning.core.events import (
    Compacted, Harness, HookEvent, PromptSubmitted, SessionEnded, SessionStarted, ToolResult, TurnEnded, Turn,
    harness_of, parse_feedback, session_key,
)
from kenning.core.telemetry import record_error
from kenning.core.types import Viewer
from kenning.observer.intake import MAX_RESULT_CHARS, result_text
from kenning.observer.promotion import Promotion
from kenning.observer.service import EndAnswer as ObserverEndAnswer
from kenning.observer.service import Observer, StepAnswer
from kenning.sessions.context import Deadline
from kenning.sessions.end import EndAnswer
from kenning.sessions.manager import CheckpointAnswer, FeedbackAnswer, SessionManager
from kenning.sessions.prompt import PromptAnswer
from kenning.sessions.start import StartAnswer

__all__ = ["CodeIndexHooks", "HookAnswer", "HooksService", "SessionEndAnswer", "ToolAnswer", "tool_result_from_body",
           "turns_as_jsonl"]

EMPTY_INJECTION: StepAnswer = {"inject": "", "memory_ids": []}


class ToolAnswer(StepAnswer, total=False):
    """A tool step's answer: the observer's (an empty injection when it is off), the checkpoint
    tick's checkpoint, and what the code index re-indexed (an edited file), when it did."""

    checkpoint_id: int | None
    code_index: dict[str, object]


class SessionEndAnswer(EndAnswer, total=False):
    """A session end's answer: the sessions manager's (summary job) and the observer's promotion of
    the session's scratchpad (absent when the promotion failed)."""

    observer: Promotion | ObserverEndAnswer


# what `HooksService.handle` answers, per event: session start, prompt, tool step, turn end
# (feedback), compaction (checkpoint), session end
HookAnswer = Union[StartAnswer, PromptAnswer, ToolAnswer, FeedbackAnswer, CheckpointAnswer, SessionEndAnswer]


class EventBody(TypedDict):
    """What every body handed to the sessions manager starts with (the event's key and time)."""

    session_key: str
    timestamp: NotRequired[str]


def tool_result_from_body(body: Mapping[str, object]) -> ToolResult:
    """A ToolResult from a post-tool-use body in any harness's shape: `tool_response` (a dict with
    exit codes / stdout / stderr, or a string), `is_error`, `error` (Claude Code's PostToolUseFailure).
    The body is the caller's JSON: each field is checked before use."""
    text, failed = result_text(body.get("tool_response", body.get("result")))
    given = body.get("error")
    error = given if isinstance(given, str) and given else None
    if body.get("is_error") is True or body.get("success") is False or error:
        failed = True
    tool_input = body.get("tool_input")
    if tool_input is not None and not isinstance(tool_input, dict):
        raise InvalidInput("tool_input must be a JSON object")
    if body.get("cwd") is not None and not isinstance(body.get("cwd"), str):
        raise InvalidInput("cwd must be a string")
    return ToolResult(
        session_key=session_key(body.get("session_key") or body.get("session_id")),
        harness=harness_of(body.get("harness")), cwd=_str(body, "cwd"), project=_str(body, "project"),
        timestamp=_str(body, "timestamp"), tool_name=_str(body, "tool_name") or "", tool_input=tool_input or {},
        output=text, success=not failed, error=(error or (text if failed else None)),
        tool_use_id=_str(body, "tool_use_id"),
    )


def _str(body: Mapping[str, object], name: str) -> str | None:
    value = body.get(name)
    return value if isinstance(value, str) else None


def turns_as_jsonl(turns: tuple[Turn, ...] | list[Turn]) -> str:
    """Turns an adapter already read, as the generic JSONL that sessions.transcript reads back."""
    rows = ({"role": t.role, "content": t.text, "timestamp": t.at, "tool_name": t.tool_name, "is_error": t.is_error}
            for t in turns)
    return "".join(json.dumps({k: v for k, v in row.items() if v is not None}, ensure_ascii=False) + "\n"
                   for row in rows)


@dataclass(frozen=True)
class CodeIndexHooks:
    """What the hooks ask of the code graph, bound to the store by the wiring
    (`kenning.codegraph.events`): the hooks service never holds the store itself."""

    refresh: Callable[[str | None], bool]  # session start: re-index what changed around cwd, in the background
    on_tool_use: Callable[[str, Mapping[str, object], str | None], dict[str, object] | None]  # re-index an edited file


class HooksService:
    """Built by the wiring (`Kenning.hooks`); the routes call `handle` with a typed event."""

    def __init__(self, sessions: SessionManager, observer: Observer, code: CodeIndexHooks,
                 observer_enabled: Callable[[], bool] = lambda: True) -> None:
        self.sessions = sessions
        self.observer = observer
        self.code = code
        self.observer_enabled = observer_enabled  # read per event: settings may change while running

    def handle(self, event: HookEvent, *, deadline: Deadline | None = None, viewer: Viewer | None = None,
               wait: bool = False) -> HookAnswer:
        if isinstance(event, SessionStarted):
            return self.session_started(event, deadline, viewer)
        if isinstance(event, PromptSubmitted):
            return self.prompt_submitted(event, deadline, viewer)
        if isinstance(event, ToolResult):
            return self.tool_result(event)
        if isinstance(event, TurnEnded):
            return self.turn_ended(event)
        if isinstance(event, Compacted):
            return self.compacted(event)
        if isinstance(event, SessionEnded):
            return self.session_ended(event, wait=wait)
        raise InvalidInput(f"not a hook event: {type(event).__name__}")

    @staticmethod
    def _base(event: HookEvent) -> EventBody:
        body: EventBody = {"session_key": session_key(event.session_key)}
        if event.timestamp is not None:
            body["timestamp"] = event.timestamp
        return body

    # -- injecting events ----------------------------------------------------------------------
    def session_started(self, event: SessionStarted, deadline: Deadline | None = None,
                        viewer: Viewer | None = None) -> StartAnswer:
        if viewer is None or viewer.sees_all:  # (a team server's users do not index paths on the server)
            self.code.refresh(event.cwd)  # files changed since the last index
        body = {**self._base(event), "harness": event.harness.value, "project": event.project, "cwd": event.cwd,
                "context": event.context}
        return self.sessions.session_start({k: v for k, v in body.items() if v is not None}, deadline, viewer)

    def prompt_submitted(self, event: PromptSubmitted, deadline: Deadline | None = None,
                         viewer: Viewer | None = None) -> PromptAnswer:
        body = {**self._base(event), "prompt": event.prompt}
        if event.memory_feedback:
            body["memory_feedback"] = dict(event.memory_feedback)
        # where the session runs, when the prompt says (Copilot CLI's may reach the daemon before session start)
        origin = {"harness": event.harness.value if event.harness != Harness.GENERIC else None,
                  "project": event.project, "cwd": event.cwd}
        body.update({k: v for k, v in origin.items() if v})
        return self.sessions.user_prompt_submit(body, deadline, viewer)

    def tool_result(self, event: ToolResult, session_type: str | None = None) -> ToolAnswer:
        """Observe the step (and ask the step decider), tick the session's checkpoint timer, re-index
        an edited file. A failed tool reaches the observer as an error with its error text."""
        body = {**self._base(event), "tool_name": event.tool_name or "unknown", "tool_input": dict(event.tool_input),
                "tool_response": (event.error if not event.success and event.error else event.output)[:MAX_RESULT_CHARS],
                "is_error": not event.success, "cwd": event.cwd, "project": event.project,
                "session_type": session_type}
        body = {k: v for k, v in body.items() if v is not None}
        answer: ToolAnswer = {**(self.observer.post_tool_use(body) if self.observer_enabled() else EMPTY_INJECTION)}
        try:
            answer["checkpoint_id"] = self.sessions.post_tool_use(self._base(event))["checkpoint_id"]
        except InvalidInput:
            raise
        except Exception as exc:  # the checkpoint tick is optional for the agent's step
            record_error("sessions", f"post-tool-use checkpoint tick failed: {exc}")
        code = self.code.on_tool_use(event.tool_name, dict(event.tool_input), event.cwd)
        if code:
            answer["code_index"] = code
        return answer

    # -- the rest --------------------------------------------------------------------------------
    def turn_ended(self, event: TurnEnded) -> FeedbackAnswer:
        scores = parse_feedback(event.last_assistant_message)
        if not scores:
            return {"applied": 0, "ignored": 0}
        return self.sessions.feedback({**self._base(event), "memory_feedback": scores})

    def feedback(self, key: str, scores: Mapping[str, object]) -> FeedbackAnswer:
        return self.sessions.feedback({"session_key": session_key(key), "memory_feedback": scores})

    def compacted(self, event: Compacted, trigger: str = "pre-compaction") -> CheckpointAnswer:
        body = {**self._base(event), "trigger": event.trigger,
                "context": event.context, "transcript": event.transcript}
        return self.sessions.checkpoint({k: v for k, v in body.items() if v is not None}, trigger)

    def session_ended(self, event: SessionEnded, *, wait: bool = False) -> SessionEndAnswer:
        transcript = event.transcript if event.transcript is not None else (
            turns_as_jsonl(event.turns) if event.turns else None)
        base = self._base(event)
        body = {**base, "transcript": transcript, "wait": wait}
        answer: SessionEndAnswer = {**self.sessions.session_end({k: v for k, v in body.items() if v is not None})}
        try:  # observer promotion from the scratchpad: runs with or without a transcript
            answer["observer"] = self.observer.end_session(base["session_key"], wait=wait)
        except Exception as exc:  # promotion failing must not fail the session end
            record_error("observer", f"session-end promotion failed: {exc}", session_key=base["session_key"])
        return answer
