"""/api/hooks: the harness-neutral hook contract (SPEC S6, issue 4).

- POST /session-start {session_key, harness?, project?, cwd?, context?, timestamp?}
  → {inject, memory_ids, candidates, status_line}
- POST /user-prompt-submit {session_key, prompt, memory_feedback?, timestamp?} → {inject, memory_ids}
- POST /pre-compaction, /checkpoint {session_key, context?} → {checkpoint_id}; pre-compaction with
  `transcript` also keeps it and stores its episodes now → {checkpoint_id, episodes}
- POST /session-end {session_key, transcript?, timestamp?, wait?} → {queued}
- POST /feedback {session_key, memory_feedback}, /post-tool-use {session_key, …} (extras)

Bad input is a 400 with a message. Session-start and user-prompt-submit never fail
otherwise: an internal error or a blown latency budget answers 200 with an empty injection
(`degraded: true`), so the agent is never blocked.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool

from kenning.api.deps import get_kenning
from kenning.codegraph import events as code_events
from kenning.core.errors import InvalidInput, KenningError
from kenning.core.telemetry import record_error
from kenning.service import Kenning
from kenning.sessions.context import Deadline

router = APIRouter(prefix="/api/hooks", tags=["hooks"])
HARD_LIMIT_FACTOR = 2.0  # the answer is abandoned (empty injection) past budget × this


async def _body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError as exc:
        raise InvalidInput("request body must be a JSON object") from exc
    if not isinstance(body, dict):
        raise InvalidInput("request body must be a JSON object")
    return body


async def _bounded(k: Kenning, name: str, body: dict[str, Any], empty: dict[str, Any]) -> dict[str, Any]:
    budget_ms = k.settings.sessions.latency_budget_ms
    deadline = Deadline(budget_ms)
    method = getattr(k.sessions, name)
    try:
        return await asyncio.wait_for(
            run_in_threadpool(method, body, deadline), timeout=budget_ms * HARD_LIMIT_FACTOR / 1000.0
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


@router.post("/session-start")
async def session_start(request: Request, k: Kenning = Depends(get_kenning)) -> dict:
    body = await _body(request)
    empty = {"inject": "", "memory_ids": [], "candidates": 0, "status_line": ""}
    code_events.refresh_in_background(k.db, body.get("cwd"))  # files changed since the last index
    return await _bounded(k, "session_start", body, empty)


@router.post("/user-prompt-submit")
async def user_prompt_submit(request: Request, k: Kenning = Depends(get_kenning)) -> dict:
    body = await _body(request)
    return await _bounded(k, "user_prompt_submit", body, {"inject": "", "memory_ids": []})


@router.post("/pre-compaction")
async def pre_compaction(request: Request, k: Kenning = Depends(get_kenning)) -> dict:
    body = await _body(request)
    return await run_in_threadpool(k.sessions.checkpoint, body, "pre-compaction")


@router.post("/checkpoint")
async def checkpoint(request: Request, k: Kenning = Depends(get_kenning)) -> dict:
    body = await _body(request)
    return await run_in_threadpool(k.sessions.checkpoint, body, "manual")


@router.post("/feedback")
async def feedback(request: Request, k: Kenning = Depends(get_kenning)) -> dict:
    body = await _body(request)
    return await run_in_threadpool(k.sessions.feedback, body)


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


@router.post("/post-tool-use")
async def post_tool_use(request: Request, k: Kenning = Depends(get_kenning)) -> dict:
    """PostToolUse: observe the step; `inject` carries memories that matter at this step ('' when none).
    Bad input is a 400; any other failure answers 200 with an empty injection (`degraded`)."""
    body = await _body(request)
    try:
        return await asyncio.wait_for(run_in_threadpool(_post_tool_use, k, body),
                                      timeout=k.settings.sessions.latency_budget_ms * HARD_LIMIT_FACTOR / 1000.0)
    except InvalidInput:
        raise
    except asyncio.TimeoutError:
        return {"inject": "", "memory_ids": [], "degraded": True, "error": "latency budget exceeded"}
    except Exception as exc:  # the hook contract: never block the agent on our failure
        record_error("observer", f"post-tool-use failed: {exc}", kind=type(exc).__name__)
        return {"inject": "", "memory_ids": [], "degraded": True, "error": "internal error"}


@router.post("/session-end")
async def session_end(request: Request, k: Kenning = Depends(get_kenning)) -> dict:
    body = await _body(request)
    answer = await run_in_threadpool(k.sessions.session_end, body)
    try:  # observer promotion from the scratchpad: runs with or without a transcript
        answer["observer"] = await run_in_threadpool(k.observer.end_session, body["session_key"],
                                                     wait=body.get("wait") is True)
    except Exception as exc:  # promotion failing must not fail the session end
        record_error("observer", f"session-end promotion failed: {exc}", session_key=body.get("session_key"))
    return answer
