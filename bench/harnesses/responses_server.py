"""A scripted OpenAI Responses server for Codex CLI (`wire_api = "responses"`).

`POST /v1/responses` answers SSE: response.created, response.output_item.added, then per item
response.output_text.delta (messages) and response.output_item.done (a `message` or a
`function_call`), and response.completed with usage. Codex's config points at it with
`base_url = "<url>/v1"` (see `codex_config`).
"""

from __future__ import annotations

import json
from typing import Any

from bench.harnesses.scripted import Recorded, ScriptedServer, ToolCall, _Handler


class ResponsesServer(ScriptedServer):
    def is_model_call(self, request: Recorded) -> bool:
        return request.method == "POST" and request.path.endswith("/responses")

    def handle(self, handler: _Handler, request: Recorded) -> None:
        if request.method == "GET" and request.path.endswith("/models"):
            handler.send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
            return
        if not self.is_model_call(request):
            handler.send_json(404, {"error": {"message": f"not scripted: {request.path}"}})
            return
        n = len(self.model_requests())
        response_id = f"resp_{n}"
        events: list[tuple[str | None, Any]] = [
            ("response.created", {"type": "response.created", "response": {"id": response_id}}),
        ]
        for index, item in enumerate(self.next_reply()):
            if isinstance(item, ToolCall):
                done = {"type": "function_call", "id": f"fc_{n}_{index}", "call_id": item.call_id,
                        "name": item.name, "arguments": json.dumps(item.args)}
                events.append(("response.output_item.added",
                               {"type": "response.output_item.added", "output_index": index,
                                "item": {**done, "arguments": ""}}))
            else:
                item_id = f"msg_{n}_{index}"
                events.append(("response.output_item.added",
                               {"type": "response.output_item.added", "output_index": index,
                                "item": {"type": "message", "id": item_id, "role": "assistant", "content": []}}))
                events.append(("response.output_text.delta",
                               {"type": "response.output_text.delta", "item_id": item_id, "output_index": index,
                                "content_index": 0, "delta": item}))
                done = {"type": "message", "id": item_id, "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": item, "annotations": []}]}
            events.append(("response.output_item.done",
                           {"type": "response.output_item.done", "output_index": index, "item": done}))
        events.append(("response.completed", {
            "type": "response.completed",
            "response": {"id": response_id, "usage": {
                "input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 110}},
        }))
        handler.send_sse(events)


def codex_config(server_url: str) -> str:
    """config.toml lines that send Codex's model calls to `server_url` (env FAKE_API_KEY holds the key)."""
    return (
        'model = "fake-model"\n'
        'model_provider = "fake"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n'
        "\n[model_providers.fake]\n"
        'name = "Fake local"\n'
        f'base_url = "{server_url}/v1"\n'
        'env_key = "FAKE_API_KEY"\n'
        'wire_api = "responses"\n'
    )
