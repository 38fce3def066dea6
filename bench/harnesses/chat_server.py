"""A scripted OpenAI chat-completions server for OpenCode (`@ai-sdk/openai-compatible`).

`GET /v1/models` lists `fake-model`; `POST /v1/chat/completions` (stream) answers
`chat.completion.chunk` SSE: a role chunk, content deltas or `tool_calls` deltas, a chunk with
`finish_reason` and usage, then `data: [DONE]`. OpenCode's title call (a request without tools)
gets a fixed title and does not use the script.
"""

from __future__ import annotations

import json
from typing import Any

from bench.harnesses.scripted import Recorded, ScriptedServer, ToolCall, _Handler

TITLE = "Scripted session"


class ChatServer(ScriptedServer):
    def is_model_call(self, request: Recorded) -> bool:
        """An agent call: chat completions with tools (the title call has none)."""
        return (request.method == "POST" and request.path.endswith("/chat/completions")
                and isinstance(request.body, dict) and bool(request.body.get("tools")))

    def handle(self, handler: _Handler, request: Recorded) -> None:
        if request.method == "GET" and request.path.endswith("/models"):
            handler.send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model",
                                                                "owned_by": "test"}]})
            return
        if not (request.method == "POST" and request.path.endswith("/chat/completions")):
            handler.send_json(404, {"error": {"message": f"not scripted: {request.path}"}})
            return
        items: list[str | ToolCall] = self.next_reply() if self.is_model_call(request) else [TITLE]
        n = len(self.requests)

        def chunk(delta: dict[str, Any], finish: str | None = None, usage: bool = False) -> dict[str, Any]:
            body: dict[str, Any] = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0,
                                    "model": "fake-model",
                                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if usage:
                body["usage"] = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
            return body

        events: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": ""}))]
        calls = [item for item in items if isinstance(item, ToolCall)]
        for item in items:
            if isinstance(item, str):
                events.append((None, chunk({"content": item})))
        for index, call in enumerate(calls):
            events.append((None, chunk({"tool_calls": [{
                "index": index, "id": call.call_id, "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.args)}}]})))
        events.append((None, chunk({}, "tool_calls" if calls else "stop", usage=True)))
        events.append((None, "[DONE]"))
        handler.send_sse(events)


def opencode_config(server_url: str) -> dict[str, Any]:
    """opencode.json sending OpenCode's model calls to `server_url`, every tool allowed."""
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": "fake/fake-model",
        "small_model": "fake/fake-model",
        "autoupdate": False,
        "share": "disabled",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible", "name": "Fake local",
            "options": {"baseURL": f"{server_url}/v1", "apiKey": "sk-test"},
            "models": {"fake-model": {"name": "Fake model", "tool_call": True}},
        }},
        "permission": {"bash": "allow", "edit": "allow", "read": "allow"},
    }


OPENCODE_ENV = {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"}
