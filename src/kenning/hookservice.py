"""The hooks service: one place where a harness event (core.events) meets the observer, the
session lifecycle and the code graph (issue 23).

Every harness reaches it the same way — its adapter (kenning.hooks.adapters.<harness>) turns the
harness's payloads into events, the HTTP routes (api/routes/hooks.py) validate the typed request
and call `HooksService.handle` — so adding a harness adds an adapter and a connector, nothing here.

    session_started  → code index refresh (local viewers) + sessions.session_start (injection)
    prompt_submitted → sessions.user_prompt_submit (injection; memory feedback)
    tool_result      → observer (success or failure, error text) + checkpoint tick + code index (queued)
    turn_ended       → memory feedback from `<memory-feedback>` in the last assistant message
    compacted        → a pre-compaction checkpoint (and the transcript's episodes so far)
    session_ended    → sessions.session_end (transcript, episodes, summary) + observer promotion
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated, Any, cast, TYPE_CHECKING, Union

from pydantic import ConfigDict, Field, GetCoreSchemaHandler, TypeAdapter, ValidationError, with_config
from pydantic_core import CoreSchema, core_schema
from typing_extensions import NotRequired, TypedDict  # (pydantic reads typing_extensions' TypedDict on 3.11)

from kenning.core.errors import InvalidInput
from kenning.core.events import (
    Compacted, HookEvent, PromptSubmitted, SessionEnded, SessionKey, SessionStarted, ToolResult, TurnEnded, WireTime,
    harness_of, parse_feedback,
)
from kenning.core.telemetry import record_error
from kenning.core.tool_outcome import verdict
from kenning.core.types import Viewer
from kenning.observer.promotion import Promotion
from kenning.observer.service import EndAnswer as ObserverEndAnswer
from kenning.observer.service import Observer, StepAnswer
from kenning.sessions.context import Deadline
from kenning.sessions.end import EndAnswer
from kenning.sessions.manager import (
    MAX_CONTEXT_CHARS, CheckpointAnswer, FeedbackAnswer, SessionFeedbackAnswer, SessionManager,
)
from kenning.sessions.prompt import PromptAnswer
from kenning.sessions.start import Degraded, StartAnswer

__all__ = ["CodeIndexHooks", "HookAnswer", "HooksService", "SessionEndAnswer", "ToolAnswer", "tool_result_from_body",
           "tool_result_of", "ToolStep", "ToolStepBody", "TOOL_STEP_BODY"]

EMPTY_INJECTION: StepAnswer = {"inject": "", "memory_ids": []}


class ToolAnswer(StepAnswer, total=False):
    """A tool step's answer — its one declaration (issue 34; the hook route's `response_model`): the observer's (an
    empty injection when it is off), the checkpoint tick's checkpoint, and the route's own `error` when it gave up
    (with `degraded`). (An edited file is re-indexed in the background: `CodeIndexHooks.on_tool_use`.)"""

    checkpoint_id: int  # (absent: none was due)
    error: str  # the route's alone: why it answered degraded


if TYPE_CHECKING:
    ObserverField = Promotion | ObserverEndAnswer
else:  # what pydantic reads (the session-end route's answer): the observer's JSON object as it answered it
    # (as sessions.end.SummaryField: validated against the TypedDicts it would be reordered and could lose keys)
    ObserverField = dict[str, object]


class SessionEndAnswer(EndAnswer, total=False):
    """A session end's answer — its one declaration (issue 34; the hook route's `response_model`): the sessions
    manager's (summary job) and the observer's promotion of the session's scratchpad (absent when the promotion
    failed). `summary` and `observer` go out as the service built them (sessions.end.SummaryField, ObserverField);
    `degraded` / `error` are the route's alone (it gave up)."""

    observer: ObserverField
    degraded: Degraded
    error: str


# what `HooksService.handle` answers, per event: session start, prompt, tool step, turn end
# (feedback), compaction (checkpoint), session end
HookAnswer = Union[StartAnswer, PromptAnswer, ToolAnswer, FeedbackAnswer, CheckpointAnswer, SessionEndAnswer]


@with_config(ConfigDict(strict=True, extra="allow"))
class ToolStepBody(TypedDict):
    """A tool step as it comes over the wire — the post-tool-use route's body, a spooled one, the generic HTTP
    contract — in the harness's shape: read into the one ToolResult by `ToolStep` (issue 34). Keys not declared
    pass (a generic caller's `success` / `result`)."""

    session_key: NotRequired[SessionKey | None]
    session_id: NotRequired[Annotated[SessionKey | None, Field(description="Claude Code's name for session_key.")]]
    is_error: NotRequired[bool | None]
    cwd: NotRequired[Annotated[str, Field(max_length=4096)] | None]
    project: NotRequired[Annotated[str, Field(max_length=500)] | None]
    timestamp: NotRequired[WireTime]
    harness: NotRequired[Annotated[str, Field(max_length=100)] | None]
    tool_name: NotRequired[Annotated[str, Field(max_length=200)] | None]
    tool_input: NotRequired[dict[str, object] | str | None]
    tool_response: NotRequired[dict[str, object] | list[object] | str | None]
    error: NotRequired[Annotated[Annotated[str, Field(max_length=MAX_CONTEXT_CHARS)] | None, Field(
        description="The tool failed (Claude Code's PostToolUseFailure): what it said.")]]
    tool_use_id: NotRequired[Annotated[str, Field(max_length=200)] | None]
    session_type: NotRequired[Annotated[str, Field(max_length=50)] | None]


def _step_event(body: ToolStepBody) -> ToolResult:
    """The one reading of a checked tool-step body into its event: the verdict the body carries (`is_error`;
    `success`, a generic caller's extra), else its `tool_response` (or `result`) read by `tool_result_of`."""
    extra = cast(Mapping[str, object], body)
    key = body.get("session_key") or body.get("session_id")
    if not key:
        raise ValueError("session_key (or session_id) is required")
    success = extra.get("success")
    is_error = body.get("is_error")
    response = body.get("tool_response")
    return tool_result_of(
        key, tool_name=body.get("tool_name"), tool_input=body.get("tool_input"),
        response=response if response is not None else extra.get("result"),
        is_error=is_error if is_error is not None else ((not success) if isinstance(success, bool) else None),
        error=body.get("error"), harness=body.get("harness"), cwd=body.get("cwd"), project=body.get("project"),
        timestamp=body.get("timestamp"), tool_use_id=body.get("tool_use_id"), session_type=body.get("session_type"))


@dataclass(frozen=True)
class _ReadAs:
    """A pydantic type's reading: validate the JSON as `wire`, then turn it into the type with `read` (one schema,
    so a route's handler holds only the result; the OpenAPI body is `wire`)."""

    wire: object
    read: Callable[[Any], object]

    def __get_pydantic_core_schema__(self, source: object, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.chain_schema([handler.generate_schema(self.wire),
                                         core_schema.no_info_plain_validator_function(self.read)])


# The post-tool-use route's body type (and a spooled body's): the ToolResult, read from a ToolStepBody.
ToolStep = Annotated[ToolResult, _ReadAs(ToolStepBody, _step_event)]
_TOOL_STEP: TypeAdapter[ToolResult] = TypeAdapter(ToolStep)
TOOL_STEP_BODY: TypeAdapter[ToolStepBody] = TypeAdapter(ToolStepBody)


def tool_result_from_body(body: Mapping[str, object]) -> ToolResult:
    """A ToolResult from a post-tool-use body as a dict (a spooled event): read as the route reads its body
    (`ToolStep`). InvalidInput when it is not a tool step."""
    try:
        return _TOOL_STEP.validate_python(dict(body))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InvalidInput(f"{where + ': ' if where else ''}{first['msg']}") from None


def tool_result_of(key: object, *, tool_name: str | None, tool_input: object, response: object, is_error: object,
                   error: object, harness: object = None, cwd: str | None = None, project: str | None = None,
                   timestamp: str | None = None, tool_use_id: str | None = None,
                   session_type: str | None = None) -> ToolResult:
    """The ToolResult of a post-tool-use step in any harness's shape: `response` (a dict with exit codes / stdout /
    stderr, or a string), `is_error`, `error` (Claude Code's PostToolUseFailure). The verdict is the one the body
    carries (`is_error`: the hook adapters decide it from their harness's payload, core.tool_outcome); only a body
    without one (the generic HTTP contract, an event spooled by an older hook) has its response read here, by the
    same rule (`core.tool_outcome.verdict`). The observer takes the event's verdict."""
    if not isinstance(key, str):
        raise InvalidInput("session_key (or session_id) is required")
    given = error if isinstance(error, str) and error else None
    text, failed = verdict(tool_name, response, is_error, given)
    if tool_input is not None and not isinstance(tool_input, dict):
        raise InvalidInput("tool_input must be a JSON object")
    return ToolResult(
        session_key=key, harness=harness_of(harness), cwd=cwd, project=project, timestamp=timestamp,
        tool_name=tool_name or "", tool_input=tool_input or {}, output=text, success=not failed,
        error=(given or (text if failed else None)), tool_use_id=tool_use_id, session_type=session_type,
    )


def _team_user(viewer: Viewer | None) -> bool:
    """A team server's user (not the local user, not the admin token): their own sessions and memories only."""
    return viewer is not None and not viewer.sees_all


@dataclass(frozen=True)
class CodeIndexHooks:
    """What the hooks ask of the code graph, bound to the store by the wiring
    (`kenning.codegraph.events`): the hooks service never holds the store itself."""

    refresh: Callable[[str | None], bool]  # session start: queue a re-index of what changed around cwd (the lookup
    # of its project too runs in the background; True: queued)
    on_tool_use: Callable[[str, dict[str, object], str | None], bool]  # queue an edited file's re-index


class HooksService:
    """Built by the wiring (`Kenning.hooks`); the routes call `handle` with a typed event."""

    def __init__(self, sessions: SessionManager, observer: Observer, code: CodeIndexHooks,
                 observer_enabled: Callable[[], bool] = lambda: True) -> None:
        self.sessions = sessions
        self.observer = observer
        self.code = code
        self.observer_enabled = observer_enabled  # read per event: settings may change while running

    def handle(self, event: HookEvent, *, deadline: Deadline | None = None, viewer: Viewer | None = None,
               wait: bool = False, session_type: str | None = None) -> HookAnswer:
        """One event, on the session it names: another user's session is refused (Forbidden, 403) before
        anything is stored (`owned`); a session start's `transcript_path` is kept (local viewers)."""
        with self.owned(event.session_key, viewer):
            if isinstance(event, SessionStarted):
                answer: HookAnswer = self.session_started(event, deadline, viewer)
                if viewer is None or viewer.sees_all:  # a path on the user's own machine: a stale session ends from it
                    self.sessions.recovery.note_transcript_path(event.session_key, event.transcript_path)
                return answer
            if isinstance(event, PromptSubmitted):
                return self.prompt_submitted(event, deadline, viewer)
            if isinstance(event, ToolResult):
                return self.tool_result(event, session_type)
            if isinstance(event, TurnEnded):
                return self.turn_ended(event, viewer)
            if isinstance(event, Compacted):
                return self.compacted(event)
            if isinstance(event, SessionEnded):
                return self.session_ended(event, wait=wait)
        raise InvalidInput(f"not a hook event: {type(event).__name__}")

    @contextmanager
    def owned(self, key: str, viewer: Viewer | None) -> Iterator[None]:
        """The one ownership check of a hook call (team servers): a session key belongs to the user whose
        token opened it; another user's call raises Forbidden before the body runs, and a session nobody
        owns yet becomes the caller's after it. The local user (and the admin token) may use any session.
        `key` is the event's, normalised where the event was made (core.events.session_key)."""
        team_user = _team_user(viewer)
        if team_user:
            self.sessions.recovery.check_owner(key, viewer)
        yield
        if team_user:
            self.sessions.recovery.check_owner(key, viewer, claim=True)

    # -- injecting events ----------------------------------------------------------------------
    def session_started(self, event: SessionStarted, deadline: Deadline | None = None,
                        viewer: Viewer | None = None) -> StartAnswer:
        if viewer is None or viewer.sees_all:  # (a team server's users do not index paths on the server)
            self.code.refresh(event.cwd)  # files changed since the last index
        return self.sessions.session_start(event, deadline, viewer)

    def prompt_submitted(self, event: PromptSubmitted, deadline: Deadline | None = None,
                         viewer: Viewer | None = None) -> PromptAnswer:
        return self.sessions.user_prompt_submit(event, deadline, viewer)

    def tool_result(self, event: ToolResult, session_type: str | None = None) -> ToolAnswer:
        """Observe the step (and ask the step decider), tick the session's checkpoint timer, re-index
        an edited file. A failed tool reaches the observer as an error with its error text."""
        session_type = session_type or event.session_type  # a replayed spool body carries it in the event
        observed = self.observer.post_tool_use(event, session_type) if self.observer_enabled() else EMPTY_INJECTION
        answer = cast(ToolAnswer, dict(observed))  # the observer's answer, then an optional checkpoint_id
        try:
            tick = self.sessions.post_tool_use(event)
            if "checkpoint_id" in tick:  # one was due
                answer["checkpoint_id"] = tick["checkpoint_id"]
        except InvalidInput:
            raise
        except Exception as exc:  # the checkpoint tick is optional for the agent's step
            record_error("sessions", f"post-tool-use checkpoint tick failed: {exc}")
        self.code.on_tool_use(event.tool_name, dict(event.tool_input), event.cwd)  # re-indexed off this call
        return answer

    # -- the rest --------------------------------------------------------------------------------
    def turn_ended(self, event: TurnEnded, viewer: Viewer | None = None) -> FeedbackAnswer:
        """The `<memory-feedback>` of the turn's last message (its session's owner checked by `handle`)."""
        scores = parse_feedback(event.last_assistant_message)
        if not scores:
            return {"applied": 0, "ignored": 0}
        return self.sessions.feedback(event.session_key, scores, shown_only=_team_user(viewer))

    def feedback(self, key: str, scores: object, viewer: Viewer | None = None) -> FeedbackAnswer:
        """Ratings a hook sends (`key` normalised by the route's SessionKey; `scores` the caller's JSON), on the
        caller's own session: the one ownership check of a rating (`owned`); a team server's user rates only
        memories that were shown to them."""
        with self.owned(key, viewer):
            return self.sessions.feedback(key, scores, shown_only=_team_user(viewer))

    def feedback_any_session(self, scores: dict[str, float], session_key: str | None = None,
                             viewer: Viewer | None = None) -> SessionFeedbackAnswer:
        """Feedback from a client that cannot know the session key (MCP, /api/feedback): it goes to the latest
        session that was offered those memories (open sessions first; on a team server the caller's own sessions
        that showed them), or to `session_key` when given — checked like any rating (`feedback`)."""
        owner = viewer.user if viewer is not None and not viewer.sees_all else None
        key = session_key or self.sessions.session_offering(list(scores), owner=owner)
        if key is None:
            return {"applied": 0, "ignored": len(scores), "session_key": None}
        fed = self.feedback(key, scores, viewer)
        return {"applied": fed["applied"], "ignored": fed["ignored"], "session_key": key}

    def compacted(self, event: Compacted) -> CheckpointAnswer:
        return self.sessions.checkpoint(event)

    def session_ended(self, event: SessionEnded, *, wait: bool = False) -> SessionEndAnswer:
        ended = self.sessions.session_end(event, wait=wait)
        answer: SessionEndAnswer = {"queued": ended["queued"], "job_id": ended["job_id"]}
        if "summary" in ended:
            answer["summary"] = ended["summary"]
        try:  # observer promotion from the scratchpad: runs with or without a transcript
            answer["observer"] = self.observer.end_session(event.session_key, wait=wait)
        except Exception as exc:  # promotion failing must not fail the session end
            record_error("observer", f"session-end promotion failed: {exc}", session_key=event.session_key)
        return answer
