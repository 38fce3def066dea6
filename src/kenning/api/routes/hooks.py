"""/api/hooks: the harness-neutral hook contract (SPEC S6, issue 4).

- POST /session-start {session_key, harness?, project?, cwd?, context?, source?, transcript_path?, timestamp?}
  → {inject, memory_ids, candidates, status_line, created, cut, predictor_used, continuity}; the body is read
  straight into core.events.SessionStarted (its field types are the wire contract)
- POST /user-prompt-submit {session_key, prompt, memory_feedback?, timestamp?} → {inject, memory_ids}
- POST /pre-compaction, /checkpoint {session_key, context?} → {checkpoint_id}; pre-compaction with
  `transcript` also keeps it and stores its episodes now → {checkpoint_id, episodes}
- POST /session-end {session_key, transcript?, timestamp?, wait?} → {queued}
- POST /feedback {session_key, memory_feedback}, /post-tool-use {session_key, tool_name, tool_input,
  tool_response, is_error?, error?} (a failed tool: `error`, Claude Code's PostToolUseFailure)
- POST /event {kind, session_key, harness, …}: one harness-neutral event (core.events), what
  every harness adapter sends; the answer is the one of the matching route above.

Every route reads its body into a typed event (core.events) — session start and a tool step directly (a tool step's
body, in the harness's shape `hookservice.ToolStepBody`, is read into the ToolResult as FastAPI reads it:
`hookservice.ToolStep`), the others through their body model — and calls the one hooks service
(`kenning.hookservice.HooksService`, `k.hooks`), which composes observer, sessions and code graph.

Each answer is declared once, by the engine that builds it, and is the route's `response_model`
(sessions.start.StartAnswer, sessions.prompt.PromptAnswer, hookservice.ToolAnswer and SessionEndAnswer; the
sessions manager's CheckpointAnswer and FeedbackAnswer); the `degraded` / `error` it declares last are this
route's alone (`_call`).

Bodies are typed (pydantic, in the OpenAPI schema); keys a route does not declare are ignored (but a tool
step's `success` / `result`, the generic contract's).
Bad input is a 400 with a message (validation errors too, not 422). Session-start and user-prompt-submit never fail
otherwise: an internal error or a blown latency budget answers 200 with an empty injection
(`degraded: true`), so the agent is never blocked.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from collections.abc import Callable, Coroutine, Mapping
from typing import Annotated, Any, Literal, TypedDict, Union

from fastapi import APIRouter, Depends, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.concurrency import run_in_threadpool

from kenning.api.deps import get_kenning, get_viewer
from kenning.api.errors import describe_validation
from kenning.api.schemas import IsoTime, errors
from kenning.api.session_guard import kick, note_refusal
from kenning.core import limits
from kenning.core.errors import Forbidden, InvalidInput, KenningError
from kenning.core.events import (
    Compacted, HookEvent, PromptSubmitted, SessionEnded, SessionKey, SessionStarted, ToolResult, event_of_kind,
    harness_of,
)
from kenning.core.telemetry import record_error
from kenning.core.types import Viewer
from kenning.hookservice import SessionEndAnswer, ToolAnswer, ToolStep
from kenning.service import Kenning
from kenning.sessions.context import Deadline
from kenning.sessions.manager import MAX_CONTEXT_CHARS, MAX_PROMPT_CHARS, CheckpointAnswer, FeedbackAnswer
from kenning.sessions.prompt import PromptAnswer
from kenning.sessions.start import StartAnswer

HARD_LIMIT_FACTOR = 2.0  # the answer is abandoned (empty injection) past budget × this


class HookRoute(APIRoute):
    """Hook bodies that fail validation answer 400 (the hook contract), not FastAPI's 422."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as exc:
                raise InvalidInput(describe_validation(exc)) from exc

        return route_handler


router = APIRouter(prefix="/api/hooks", tags=["hooks"], route_class=HookRoute, responses=errors(400))

Text = Annotated[str, Field(max_length=MAX_CONTEXT_CHARS)]


def _as_dict(body: BaseModel, timestamp: datetime | None) -> dict[str, object]:
    """A hook body as the handlers take it: the JSON sent (nulls left out), the timestamp checked."""
    data: dict[str, object] = body.model_dump(mode="json", exclude_none=True)
    if timestamp is not None:
        data["timestamp"] = limits.check_created_at(timestamp, "timestamp")
    return data


class _HookIn(BaseModel):
    """Typed hook bodies; keys not declared pass through to the handler (harness extras)."""

    model_config = ConfigDict(extra="allow", strict=True)

    session_key: SessionKey
    timestamp: IsoTime | None = Field(None, description="ISO 8601 between 1970 and a day from now; "
                                      "replays set it, else the daemon's clock.")

    def as_dict(self) -> dict[str, object]:
        return _as_dict(self, self.timestamp)


class UserPromptIn(_HookIn):
    prompt: Annotated[str, Field(min_length=1, pattern=limits.VISIBLE_PATTERN,
                                 description=f"Cut to {MAX_PROMPT_CHARS} characters.")]
    memory_feedback: dict[str, object] | None = Field(None, description="{memory_id: score in [-1, 1]}; "
                                                   "entries that are not are ignored and counted.")
    # where the session runs (Copilot CLI sends them: its prompt may reach the daemon before session start)
    harness: Annotated[str, Field(max_length=100)] | None = None
    project: Annotated[str, Field(max_length=500)] | None = None
    cwd: Annotated[str, Field(max_length=4096)] | None = None


Refused = Annotated[str, Field(max_length=50, description="The hook did not read the transcript, and why (outside "
                               "the harness folders, too large …): counted by reason; an unknown reason is ignored.")]


class CheckpointIn(_HookIn):
    context: Text | None = None
    trigger: Annotated[str, Field(max_length=50)] | None = None
    transcript: str | None = Field(None, description="pre-compaction: the transcript so far (its episodes are "
                                   "stored now).")
    transcript_refused: Refused | None = None


class FeedbackIn(_HookIn):
    memory_feedback: dict[str, object] | None = Field(None, description="{memory_id: score in [-1, 1]}.")


class StepIn(BaseModel):
    """An agent step (/api/observe; a tool step is hookservice.ToolStepBody): Claude Code names the key `session_id`."""

    model_config = ConfigDict(extra="allow", strict=True)

    session_key: SessionKey | None = None
    session_id: SessionKey | None = Field(None, description="Claude Code's name for session_key.")
    is_error: bool | None = None
    cwd: Annotated[str, Field(max_length=4096)] | None = None
    project: Annotated[str, Field(max_length=500)] | None = None

    @model_validator(mode="after")
    def _one_key(self) -> "StepIn":
        if not (self.session_key or self.session_id):
            raise ValueError("session_key (or session_id) is required")
        return self


class SessionEndIn(_HookIn):
    transcript: str | None = Field(None, description="The whole transcript (redacted before it is stored).")
    wait: bool = Field(False, description="Summarise inside this request and return the summary.")
    reason: Annotated[str, Field(max_length=100)] | None = None
    transcript_refused: Refused | None = None


HookBody = _HookIn  # a hook route's typed body model; each reads itself back with `as_dict` (a tool step's: ToolStep)


# -- /event: one harness-neutral event (core.events), what every harness adapter sends ------------
class _EventIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    session_key: SessionKey
    harness: Annotated[str, Field(max_length=100)] = "generic"
    cwd: Annotated[str, Field(max_length=4096)] | None = None
    project: Annotated[str, Field(max_length=500)] | None = None
    timestamp: IsoTime | None = Field(None, description="ISO 8601; replays set it, else the daemon's clock.")
    transcript_path: Annotated[str, Field(max_length=4096)] | None = None


class SessionStartedIn(_EventIn):
    kind: Literal["session_started"]
    source: Annotated[str, Field(max_length=50)] = "startup"
    context: Text | None = None


class PromptSubmittedIn(_EventIn):
    kind: Literal["prompt_submitted"]
    prompt: Annotated[str, Field(min_length=1, pattern=limits.VISIBLE_PATTERN)]
    memory_feedback: dict[str, object] = Field(default_factory=dict)


class ToolResultIn(_EventIn):
    kind: Literal["tool_result"]
    tool_name: Annotated[str, Field(max_length=200)]
    tool_input: dict[str, object] = Field(default_factory=dict)
    input_summary: Annotated[str, Field(max_length=MAX_CONTEXT_CHARS)] = ""
    output: str = Field("", description="What the tool printed (untrusted; cut by the observer).")
    success: bool = True
    error: str | None = Field(None, description="success false: what the failure said.")
    tool_use_id: Annotated[str, Field(max_length=200)] | None = None


class TurnEndedIn(_EventIn):
    kind: Literal["turn_ended"]
    last_assistant_message: str = ""


class CompactedIn(_EventIn):
    kind: Literal["compacted"]
    trigger: Annotated[str, Field(max_length=50)] = "compact"
    context: Text | None = None
    transcript: str | None = None


class TurnIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    role: Literal["user", "assistant", "tool"]
    text: str
    at: IsoTime | None = None
    tool_name: Annotated[str, Field(max_length=200)] | None = None
    is_error: bool | None = None


class SessionEndedIn(_EventIn):
    kind: Literal["session_ended"]
    reason: Annotated[str, Field(max_length=100)] | None = None
    transcript: str | None = None
    turns: list[TurnIn] = Field(default_factory=list, description="The conversation the adapter read "
                                "(used when `transcript` is absent).")
    wait: bool = False


EventIn = Annotated[Union[SessionStartedIn, PromptSubmittedIn, ToolResultIn, TurnEndedIn, CompactedIn,
                          SessionEndedIn], Field(discriminator="kind")]


# /event's answer: the one of the route the event's kind stands for, each the engine's one declaration (session_started,
# prompt_submitted, session_ended, turn_ended, tool_result, compacted). pydantic's smart union keeps the member
# that validates with the most keys set, so an answer goes out with every key it has (a tool step's
# {inject, memory_ids, step} is ToolAnswer, a compaction's {checkpoint_id, episodes} CheckpointAnswer).
EventOut = Union[StartAnswer, PromptAnswer, SessionEndAnswer, FeedbackAnswer, ToolAnswer, CheckpointAnswer]


_EMPTY = {"inject": "", "memory_ids": []}
_EMPTY_PROMPT: PromptAnswer = {"inject": "", "memory_ids": [], "fts_hits": 0, "fts_only": 0, "feedback_applied": 0,
                               "feedback_ignored": 0, "cut": []}
_EMPTY_START: StartAnswer = {"inject": "", "memory_ids": [], "candidates": 0, "status_line": "", "created": False,
                             "cut": [], "predictor_used": False, "continuity": None}
_BOUNDED = (SessionStarted, PromptSubmitted)  # the agent waits on these: a latency budget, never a failure


async def _call(k: Kenning, event: HookEvent, viewer: Viewer, *, wait: bool = False,
                session_type: str | None = None) -> Mapping[str, object]:
    """Hand one event to the hooks service (`HooksService.handle`: ownership, then the event). Injecting
    events (session start, prompt, tool result) answer within the latency budget × HARD_LIMIT_FACTOR or with
    an empty injection (`degraded`); bad input is a 400 and another user's session a 403; the other events'
    failures are errors as usual."""
    budget_ms = k.settings.sessions.latency_budget_ms
    deadline = Deadline(budget_ms)

    def call() -> Mapping[str, object]:
        return k.hooks.handle(event, deadline=deadline, viewer=viewer, wait=wait, session_type=session_type)

    if not isinstance(event, (*_BOUNDED, ToolResult)):
        return await run_in_threadpool(call)
    empty = (_EMPTY_START if isinstance(event, SessionStarted) else _EMPTY_PROMPT if isinstance(event, PromptSubmitted)
             else _EMPTY)
    name = event.kind
    try:
        return await asyncio.wait_for(run_in_threadpool(call), timeout=budget_ms * HARD_LIMIT_FACTOR / 1000.0)
    except (InvalidInput, Forbidden):
        raise
    except asyncio.TimeoutError:
        deadline.cancelled = True
        record_error("sessions", f"{name} exceeded {budget_ms * HARD_LIMIT_FACTOR:.0f} ms; empty injection",
                     session_key=event.session_key)
        return {**empty, "degraded": True, "error": "latency budget exceeded"}
    except Exception as exc:  # the hook contract: never block the agent on our failure
        record_error("observer" if isinstance(event, ToolResult) else "sessions", f"{name} failed: {exc}",
                     session_key=event.session_key, kind=type(exc).__name__)
        return {**empty, "degraded": True, "error": str(exc) if isinstance(exc, KenningError) else "internal error"}


class _Base(TypedDict):
    session_key: str
    timestamp: str | None


def _base(body: _HookIn) -> _Base:
    """What every event takes from a route's typed body: its key as `SessionKey` read it (the one
    normalisation), its timestamp checked (None: the daemon's clock)."""
    return {"session_key": body.session_key, "timestamp": limits.check_created_at(body.timestamp, "timestamp")}


# The body is read straight into the event (core.events.SessionStarted: its fields' types are the wire contract, the
# key normalised once by SessionKey): one shape from here to sessions.start. The answer: continuity null when none.
@router.post("/session-start", response_model=StartAnswer)
async def session_start(event: SessionStarted, k: Kenning = Depends(get_kenning),
                        viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    return await _call(k, event, viewer)


@router.post("/user-prompt-submit", response_model=PromptAnswer, response_model_exclude_none=True)
async def user_prompt_submit(body: UserPromptIn, k: Kenning = Depends(get_kenning),
                             viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    event = PromptSubmitted(**_base(body), prompt=body.prompt, memory_feedback=body.memory_feedback or {},
                            harness=harness_of(body.harness), project=body.project or None, cwd=body.cwd or None)
    return await _call(k, event, viewer)


@router.post("/pre-compaction", response_model=CheckpointAnswer, response_model_exclude_none=True)
async def pre_compaction(body: CheckpointIn, k: Kenning = Depends(get_kenning),
                         viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    note_refusal(body.transcript_refused)
    event = Compacted(**_base(body), trigger=body.trigger or "pre-compaction", context=body.context,
                      transcript=body.transcript)
    return await _call(k, event, viewer)


@router.post("/checkpoint", response_model=CheckpointAnswer, response_model_exclude_none=True)
async def checkpoint(body: CheckpointIn, k: Kenning = Depends(get_kenning),
                     viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    event = Compacted(**_base(body), trigger=body.trigger or "manual", context=body.context)
    return await _call(k, event, viewer)


@router.post("/feedback", response_model=FeedbackAnswer, response_model_exclude_none=True)
async def feedback(body: FeedbackIn, k: Kenning = Depends(get_kenning),
                   viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    return await run_in_threadpool(k.hooks.feedback, body.session_key, body.memory_feedback or {}, viewer)


@router.post("/post-tool-use", response_model=ToolAnswer, response_model_exclude_none=True)
async def post_tool_use(event: ToolStep, k: Kenning = Depends(get_kenning),
                        viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    """A tool step (success, or failure with `error`): observe it; `inject` carries memories that matter
    at this step ('' when none). Bad input is a 400; any other failure answers 200 with an empty
    injection (`degraded`)."""
    # the body (hookservice.ToolStepBody, the harness's shape) was read straight into the event (ToolStep)
    return await _call(k, event, viewer, session_type=event.session_type)


@router.post("/session-end", response_model=SessionEndAnswer, response_model_exclude_none=True)
async def session_end(body: SessionEndIn, k: Kenning = Depends(get_kenning),
                      viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    note_refusal(body.transcript_refused)
    event = SessionEnded(**_base(body), transcript=body.transcript, reason=body.reason)
    return await _call(k, event, viewer, wait=body.wait)


@router.post("/event", response_model=EventOut, response_model_exclude_none=True)
async def event(body: EventIn, request: Request, k: Kenning = Depends(get_kenning),
                viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    """One harness-neutral event (core.events): what every harness adapter sends."""
    kick(request, starting=body.kind == "session_started")  # (the guard leaves /event's kick here: it knows the kind)
    data = body.model_dump(mode="json", exclude_none=True)  # session_key as SessionKey read it (once)
    wait = data.pop("wait", False)
    if data.get("timestamp") is not None:
        data["timestamp"] = limits.check_created_at(data["timestamp"], "timestamp")
    return await _call(k, event_of_kind(body.kind, data), viewer, wait=wait)
