"""/api/hooks: the harness-neutral hook contract (SPEC S6, issue 4).

- POST /session-start {session_key, harness?, project?, cwd?, context?, timestamp?}
  → {inject, memory_ids, candidates, status_line}
- POST /user-prompt-submit {session_key, prompt, memory_feedback?, timestamp?} → {inject, memory_ids}
- POST /pre-compaction, /checkpoint {session_key, context?} → {checkpoint_id}; pre-compaction with
  `transcript` also keeps it and stores its episodes now → {checkpoint_id, episodes}
- POST /session-end {session_key, transcript?, timestamp?, wait?} → {queued}
- POST /feedback {session_key, memory_feedback}, /post-tool-use {session_key, …} (extras)

Bodies are typed (pydantic, in the OpenAPI schema); extra keys pass through to the handlers.
Bad input is a 400 with a message (validation errors too, not 422). Session-start and user-prompt-submit never fail
otherwise: an internal error or a blown latency budget answers 200 with an empty injection
(`degraded: true`), so the agent is never blocked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.concurrency import run_in_threadpool

from kenning.api.deps import get_kenning, get_viewer
from kenning.api.errors import describe_validation
from kenning.api.schemas import IsoTime, errors
from kenning.codegraph import events as code_events
from kenning.core import limits
from kenning.core.errors import InvalidInput, KenningError
from kenning.core.telemetry import record_error
from kenning.core.types import Viewer
from kenning.service import Kenning
from kenning.sessions.context import Deadline
from kenning.sessions.manager import MAX_CONTEXT_CHARS, MAX_PROMPT_CHARS

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

SessionKey = Annotated[str, Field(min_length=1, max_length=256, pattern=limits.VISIBLE_PATTERN)]
Text = Annotated[str, Field(max_length=MAX_CONTEXT_CHARS)]


class _HookIn(BaseModel):
    """Typed hook bodies; keys not declared pass through to the handler (harness extras)."""

    model_config = ConfigDict(extra="allow", strict=True)

    session_key: SessionKey
    timestamp: IsoTime | None = Field(None, description="ISO 8601 between 1970 and a day from now; "
                                      "replays set it, else the daemon's clock.")

    def as_dict(self) -> dict[str, Any]:
        body = self.model_dump(mode="json", exclude_none=True)
        if self.timestamp is not None:
            body["timestamp"] = limits.check_created_at(self.timestamp, "timestamp")
        return body


class SessionStartIn(_HookIn):
    harness: Annotated[str, Field(max_length=100)] | None = None
    project: Annotated[str, Field(max_length=500)] | None = None
    cwd: Annotated[str, Field(max_length=4096)] | None = None
    context: Text | None = None


class UserPromptIn(_HookIn):
    prompt: Annotated[str, Field(min_length=1, pattern=limits.VISIBLE_PATTERN,
                                 description=f"Cut to {MAX_PROMPT_CHARS} characters.")]
    memory_feedback: dict[str, Any] | None = Field(None, description="{memory_id: score in [-1, 1]}; "
                                                   "entries that are not are ignored and counted.")


class CheckpointIn(_HookIn):
    context: Text | None = None
    trigger: Annotated[str, Field(max_length=50)] | None = None
    transcript: str | None = Field(None, description="pre-compaction: the transcript so far (its episodes are "
                                   "stored now).")


class FeedbackIn(_HookIn):
    memory_feedback: dict[str, Any] | None = Field(None, description="{memory_id: score in [-1, 1]}.")


class StepIn(BaseModel):
    """An agent step (PostToolUse, /api/observe): Claude Code names the key `session_id`."""

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


class PostToolUseIn(StepIn):
    timestamp: IsoTime | None = Field(None, description="ISO 8601 between 1970 and a day from now.")
    tool_name: Annotated[str, Field(max_length=200)] | None = None
    tool_input: dict[str, Any] | str | None = None
    tool_response: dict[str, Any] | list[Any] | str | None = None
    session_type: Annotated[str, Field(max_length=50)] | None = None

    as_dict = _HookIn.as_dict


class SessionEndIn(_HookIn):
    transcript: str | None = Field(None, description="The whole transcript (redacted before it is stored).")
    wait: bool = Field(False, description="Summarise inside this request and return the summary.")


class _HookOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    degraded: bool | None = Field(None, description="true: an internal error or the latency budget; empty answer.")
    error: str | None = None


class InjectOut(_HookOut):
    inject: str
    memory_ids: list[str]


class SessionStartOut(InjectOut):
    candidates: int
    status_line: str


class CheckpointOut(_HookOut):
    checkpoint_id: int | str | None = None


class FeedbackOut(_HookOut):
    applied: int
    ignored: int


class PostToolUseOut(_HookOut):
    inject: str = ""
    memory_ids: list[str] = Field(default_factory=list)
    checkpoint_id: int | str | None = None


class SessionEndOut(_HookOut):
    queued: bool
    job_id: int | str | None = None
    summary: dict[str, Any] | None = None


async def _bounded(k: Kenning, name: str, body: dict[str, Any], empty: dict[str, Any],
                   viewer: Viewer | None = None) -> dict[str, Any]:
    budget_ms = k.settings.sessions.latency_budget_ms
    deadline = Deadline(budget_ms)
    method = getattr(k.sessions, name)
    try:
        return await asyncio.wait_for(
            run_in_threadpool(method, body, deadline, viewer), timeout=budget_ms * HARD_LIMIT_FACTOR / 1000.0
        )
    except InvalidInput:
        raise
    except asyncio.TimeoutError:
        deadline.cancelled = True
        record_error("sessions", f"{name} exceeded {budget_ms * HARD_LIMIT_FACTOR:.0f} ms; empty injection",
                     session_key=body.get("session_key"))
        return {**empty, "degraded": True, "error": "latency budget exceeded"}
    except Exception as exc:  # the hook contract: never block the agent on our failure
        record_error("sessions", f"{name} failed: {exc}", session_key=body.get("session_key"),
                     kind=type(exc).__name__)
        return {**empty, "degraded": True, "error": str(exc) if isinstance(exc, KenningError) else "internal error"}


@router.post("/session-start", response_model=SessionStartOut, response_model_exclude_none=True)
async def session_start(body: SessionStartIn, k: Kenning = Depends(get_kenning),
                        viewer: Viewer = Depends(get_viewer)) -> dict:
    empty = {"inject": "", "memory_ids": [], "candidates": 0, "status_line": ""}
    body_dict = body.as_dict()
    if viewer.sees_all:  # (a team server's users do not index paths on the server)
        code_events.refresh_in_background(k.db, body_dict.get("cwd"))  # files changed since the last index
    return await _bounded(k, "session_start", body_dict, empty, viewer)


@router.post("/user-prompt-submit", response_model=InjectOut, response_model_exclude_none=True)
async def user_prompt_submit(body: UserPromptIn, k: Kenning = Depends(get_kenning),
                             viewer: Viewer = Depends(get_viewer)) -> dict:
    return await _bounded(k, "user_prompt_submit", body.as_dict(), {"inject": "", "memory_ids": []}, viewer)


@router.post("/pre-compaction", response_model=CheckpointOut, response_model_exclude_none=True)
async def pre_compaction(body: CheckpointIn, k: Kenning = Depends(get_kenning)) -> dict:
    return await run_in_threadpool(k.sessions.checkpoint, body.as_dict(), "pre-compaction")


@router.post("/checkpoint", response_model=CheckpointOut, response_model_exclude_none=True)
async def checkpoint(body: CheckpointIn, k: Kenning = Depends(get_kenning)) -> dict:
    return await run_in_threadpool(k.sessions.checkpoint, body.as_dict(), "manual")


@router.post("/feedback", response_model=FeedbackOut, response_model_exclude_none=True)
async def feedback(body: FeedbackIn, k: Kenning = Depends(get_kenning)) -> dict:
    return await run_in_threadpool(k.sessions.feedback, body.as_dict())


def _post_tool_use(k: Kenning, body: dict[str, Any]) -> dict[str, Any]:
    """Observe the step and ask the step decider, then tick the session's checkpoint timer."""
    answer = k.observer.post_tool_use(body) if k.settings.observer.enabled else {"inject": "", "memory_ids": []}
    try:
        key = body.get("session_key") or body.get("session_id")
        answer["checkpoint_id"] = k.sessions.post_tool_use({**body, "session_key": key})["checkpoint_id"]
    except InvalidInput:
        raise
    except Exception as exc:  # the checkpoint tick is optional for the agent's step
        record_error("sessions", f"post-tool-use checkpoint tick failed: {exc}")
    code = code_events.on_tool_use(k.db, body.get("tool_name"), body.get("tool_input"),
                                   body.get("cwd"))  # Edit/Write: re-index that file
    return answer | ({"code_index": code} if code else {})


@router.post("/post-tool-use", response_model=PostToolUseOut, response_model_exclude_none=True)
async def post_tool_use(body: PostToolUseIn, k: Kenning = Depends(get_kenning)) -> dict:
    """PostToolUse: observe the step; `inject` carries memories that matter at this step ('' when none).
    Bad input is a 400; any other failure answers 200 with an empty injection (`degraded`)."""
    try:
        return await asyncio.wait_for(run_in_threadpool(_post_tool_use, k, body.as_dict()),
                                      timeout=k.settings.sessions.latency_budget_ms * HARD_LIMIT_FACTOR / 1000.0)
    except InvalidInput:
        raise
    except asyncio.TimeoutError:
        return {"inject": "", "memory_ids": [], "degraded": True, "error": "latency budget exceeded"}
    except Exception as exc:  # the hook contract: never block the agent on our failure
        record_error("observer", f"post-tool-use failed: {exc}", kind=type(exc).__name__)
        return {"inject": "", "memory_ids": [], "degraded": True, "error": "internal error"}


@router.post("/session-end", response_model=SessionEndOut, response_model_exclude_none=True)
async def session_end(body: SessionEndIn, k: Kenning = Depends(get_kenning)) -> dict:
    answer = await run_in_threadpool(k.sessions.session_end, body.as_dict())
    try:  # observer promotion from the scratchpad: runs with or without a transcript
        answer["observer"] = await run_in_threadpool(k.observer.end_session, body.session_key, wait=body.wait)
    except Exception as exc:  # promotion failing must not fail the session end
        record_error("observer", f"session-end promotion failed: {exc}", session_key=body.session_key)
    return answer
