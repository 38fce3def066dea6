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

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool

from kenning.api.deps import get_kenning
from kenning.api.routes.hooks import _body
from kenning.core.errors import InvalidInput
from kenning.service import Kenning

router = APIRouter(tags=["observer"])


@router.post("/api/observe")
async def observe(request: Request, k: Kenning = Depends(get_kenning)) -> dict:
    body = await _body(request)
    return await run_in_threadpool(k.observer.observe, body)


@router.get("/api/observer/status")
def status(k: Kenning = Depends(get_kenning)) -> dict:
    return k.observer.status()


@router.get("/api/observer/sessions/{session_key}")
def session(session_key: str, k: Kenning = Depends(get_kenning)) -> dict:
    return k.observer.session(session_key)


@router.post("/api/observer/sessions/{session_key}/end")
async def end(session_key: str, request: Request, k: Kenning = Depends(get_kenning)) -> dict:
    body = await _body(request) if (await request.body()).strip() else {}
    wait = body.get("wait", True)
    if not isinstance(wait, bool):
        raise InvalidInput("wait must be true or false")
    return await run_in_threadpool(k.observer.end_session, session_key, wait=wait)


@router.post("/api/observer/checkpoint")
async def checkpoint(k: Kenning = Depends(get_kenning)) -> dict:
    return {"written": await run_in_threadpool(k.observer.checkpoint)}


@router.post("/api/observer/lifecycle/run")
async def run_lifecycle(k: Kenning = Depends(get_kenning)) -> dict:
    return await run_in_threadpool(k.observer.run_lifecycle)
