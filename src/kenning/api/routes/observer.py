"""/api/observe and /api/observer: the generic event API and what the observer knows.

- POST /api/observe {session_key, type: tool-call|tool-result|reasoning|step-complete, tool_name?,
  args?, result?, is_error?, text?, cwd?, project?} → {step, inject, memory_ids}
- GET /api/observer/status → live sessions, counters, observe/decide p95, A/B settings and metrics
- GET /api/observer/sessions/{key} → live scratchpad summary, persisted signals, step injections
- POST /api/observer/sessions/{key}/end {wait?} → promote the scratchpad now
- POST /api/observer/checkpoint → write changed scratchpads now
- POST /api/observer/lifecycle/run → one pruning / trust-promotion pass now
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from fastapi import APIRouter, Body, Depends
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from kenning.api.deps import get_kenning
from kenning.api.routes.hooks import HookRoute, StepIn
from kenning.api.schemas import errors
from kenning.observer.intake import EVENT_TYPES
from kenning.service import Kenning

router = APIRouter(tags=["observer"], route_class=HookRoute)


class ObserveIn(StepIn):
    """One agent event; keys not declared pass through to the observer."""

    type: Literal[EVENT_TYPES]  # type: ignore[valid-type]
    tool_name: Annotated[str, Field(max_length=100)] | None = None
    args: dict[str, object] | None = None
    result: dict[str, object] | list[object] | str | None = None
    text: str | None = Field(None, description="The reasoning text (type reasoning).")


class EndIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    wait: bool = Field(True, description="Promote inside this request.")


@router.post("/api/observe", responses=errors(400))
async def observe(body: ObserveIn, k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:
    return await run_in_threadpool(k.observer.observe, body.model_dump(mode="json", exclude_none=True))


@router.get("/api/observer/status")
def status(k: Kenning = Depends(get_kenning)) -> dict:
    return k.observer.status()


@router.get("/api/observer/sessions/{session_key}", responses=errors(404))
def session(session_key: str, k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:
    return k.observer.session(session_key)


@router.post("/api/observer/sessions/{session_key}/end", responses=errors(400))
async def end(session_key: str, body: Annotated[EndIn | None, Body()] = None,
              k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:
    wait = body.wait if body is not None else True
    return await run_in_threadpool(k.observer.end_session, session_key, wait=wait)


@router.post("/api/observer/checkpoint")
async def checkpoint(k: Kenning = Depends(get_kenning)) -> dict:
    return {"written": await run_in_threadpool(k.observer.checkpoint)}


@router.post("/api/observer/lifecycle/run")
async def run_lifecycle(k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:
    return await run_in_threadpool(k.observer.run_lifecycle)
