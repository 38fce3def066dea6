"""A hook answer is declared once (issue 34): the route's `response_model` is the engine's own answer type, and that
one declaration carries the route's `degraded` / `error` — so an answer the route gives up on (an empty injection,
the flag and why) goes out with them, after the answer's own keys, in the order it always had."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

from fastapi.routing import APIRoute, serialize_response
from pydantic import TypeAdapter

from kenning.api.routes.hooks import router
from kenning.hookservice import SessionEndAnswer, ToolAnswer
from kenning.sessions.prompt import PromptAnswer
from kenning.sessions.start import StartAnswer

# route → the engine's declaration it serialises
DECLARED = {
    "/api/hooks/session-start": StartAnswer,
    "/api/hooks/user-prompt-submit": PromptAnswer,
    "/api/hooks/post-tool-use": ToolAnswer,
    "/api/hooks/session-end": SessionEndAnswer,
}


ROUTES = {r.path: r for r in router.routes if isinstance(r, APIRoute)}


def _wire(path: str, answer: object) -> bytes:
    """The bytes FastAPI writes for `answer` on the route (its response field and options, FastAPI's serialiser)."""
    route = ROUTES[path]

    def run() -> bytes:
        return asyncio.run(serialize_response(field=route.response_field, response_content=answer,
                                              exclude_none=route.response_model_exclude_none, dump_json=True))

    # on a thread of its own: an event loop may already run on this one (a browser test's, in the same worker)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result()


def _sent(path: str, answer: dict) -> dict:
    return {k: v for k, v in answer.items() if v is not None or not ROUTES[path].response_model_exclude_none}


def test_each_hook_route_serialises_the_engines_own_answer():
    for path, declared in DECLARED.items():
        assert ROUTES[path].response_model is declared, path


def test_a_degraded_session_start_keeps_its_flag_and_reason_after_the_answers_keys():
    empty: StartAnswer = {"inject": "", "memory_ids": [], "candidates": 0, "status_line": "", "created": False,
                          "cut": [], "predictor_used": False, "continuity": None}
    degraded = {**empty, "degraded": True, "error": "latency budget exceeded"}
    for path in ("/api/hooks/session-start", "/api/hooks/event"):  # (/event leaves nulls out)
        out = _wire(path, degraded)
        assert json.loads(out) == _sent(path, degraded), path
        assert out.endswith(b',"degraded":true,"error":"latency budget exceeded"}'), path
    # the engine's answer has no such keys, and none is added
    assert json.loads(_wire("/api/hooks/session-start", empty)) == empty
    assert "degraded" not in json.loads(TypeAdapter(StartAnswer).dump_json(empty))


def test_a_degraded_prompt_keeps_its_flag_and_reason_after_the_answers_keys():
    empty: PromptAnswer = {"inject": "", "memory_ids": [], "fts_hits": 0, "fts_only": 0, "feedback_applied": 0,
                           "feedback_ignored": 0, "cut": []}
    degraded = {**empty, "degraded": True, "error": "latency budget exceeded"}
    for path in ("/api/hooks/user-prompt-submit", "/api/hooks/event"):
        out = _wire(path, degraded)
        assert json.loads(out) == degraded, path
        assert out.endswith(b',"cut":[],"degraded":true,"error":"latency budget exceeded"}'), path
    assert json.loads(_wire("/api/hooks/user-prompt-submit", {**empty, "checkpoint_id": 2})) == {**empty,
                                                                                                "checkpoint_id": 2}


def test_a_degraded_tool_step_keeps_its_flag_and_reason():
    degraded = {"inject": "", "memory_ids": [], "degraded": True, "error": "internal error"}
    for path in ("/api/hooks/post-tool-use", "/api/hooks/event"):
        assert _wire(path, degraded) == (b'{"inject":"","memory_ids":[],"degraded":true,"error":"internal error"}'), path
    step = {"inject": "", "memory_ids": [], "step": 3, "checkpoint_id": 7}
    assert json.loads(_wire("/api/hooks/post-tool-use", step)) == step


def test_a_session_ends_answer_keeps_what_the_service_built():
    answer = {"queued": True, "job_id": 4, "summary": None, "observer": {"queued": True, "extra": [1]}}
    for path in ("/api/hooks/session-end", "/api/hooks/event"):
        assert json.loads(_wire(path, answer)) == _sent(path, answer), path
