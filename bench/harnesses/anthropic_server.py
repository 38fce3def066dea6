"""A scripted Anthropic Messages server for Claude Code (`ANTHROPIC_BASE_URL`).

`POST /v1/messages?beta=true` with `stream: true` answers SSE: message_start, one
content_block_start/delta/stop per text piece (`text_delta`) or tool call (`tool_use` with its
input as `input_json_delta`), message_delta (stop_reason `tool_use` or `end_turn`), message_stop.
A non-streaming call gets the same message as one JSON body; `/v1/messages/count_tokens` a count.
Every request body is recorded (`server.requests`), so a test can assert that a stored memory
reached the model's request.

    with AnthropicServer() as server:
        server.script(tool("Bash", command="exit 1"), "It failed.")
"""

from __future__ import annotations

import json
from typing import Any

from bench.harnesses.scripted import Recorded, ScriptedServer, ToolCall, _Handler, tool

__all__ = ["AnthropicServer", "tool", "claude_env", "request_texts"]
MODEL = "claude-scripted"


class AnthropicServer(ScriptedServer):
    def is_model_call(self, request: Recorded) -> bool:
        return (request.method == "POST" and request.path.endswith("/v1/messages")
                and isinstance(request.body, dict))

    def handle(self, handler: _Handler, request: Recorded) -> None:
        if request.method == "POST" and request.path.endswith("/count_tokens"):
            handler.send_json(200, {"input_tokens": 100})
            return
        if not self.is_model_call(request):
            handler.send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                               "message": f"not scripted: {request.path}"}})
            return
        items = self.next_reply()
        n = len(self.requests)
        blocks: list[dict[str, Any]] = []
        for index, item in enumerate(items):
            if isinstance(item, ToolCall):
                blocks.append({"type": "tool_use", "id": f"toolu_{n:03d}_{index}", "name": item.name,
                               "input": item.args})
            else:
                blocks.append({"type": "text", "text": item})
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": MODEL, "content": [],
                   "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 100, "output_tokens": 1}}
        if not request.body.get("stream"):
            handler.send_json(200, {**message, "content": blocks, "stop_reason": stop,
                                    "usage": {"input_tokens": 100, "output_tokens": 10}})
            return
        events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": message})]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": start}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": 10}}))
        events.append(("message_stop", {"type": "message_stop"}))
        handler.send_sse(events)


def claude_env(server_url: str, home: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a headless Claude Code run against `server_url` with HOME=`home`."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_", "KENNING_"))}
    env.update({
        "HOME": home, "ANTHROPIC_BASE_URL": server_url, "ANTHROPIC_API_KEY": "dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
    })
    env.update(extra or {})
    return env


def request_texts(request: Recorded) -> str:
    """Everything a model request carried (system and messages) as one text."""
    return request.text()
