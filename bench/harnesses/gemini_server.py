"""A scripted Gemini API server for Gemini CLI (`GOOGLE_GEMINI_BASE_URL`).

`POST /v1beta/models/MODEL:streamGenerateContent?alt=sse` answers `data: {"candidates": […]}`
events: text parts, then `functionCall` parts for scripted tool calls, the last one with
`finishReason` and `usageMetadata`. `…:generateContent` (the CLI's routing / next-speaker side
calls) answers a fixed JSON text without using the script; `…:countTokens` a count.
"""

from __future__ import annotations

import json
from typing import Any

from bench.harnesses.scripted import Recorded, ScriptedServer, ToolCall, _Handler

USAGE = {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}


class GeminiServer(ScriptedServer):
    def is_model_call(self, request: Recorded) -> bool:
        return request.method == "POST" and request.path.endswith(":streamGenerateContent")

    def handle(self, handler: _Handler, request: Recorded) -> None:
        if request.path.endswith(":countTokens"):
            handler.send_json(200, {"totalTokens": 100})
            return
        if request.path.endswith(":generateContent"):
            # side calls (model routing, next speaker): a JSON answer they can parse, else they fall back
            text = json.dumps({"complexity_reasoning": "scripted", "complexity_score": 10, "reasoning": "scripted",
                               "model_choice": "flash", "next_speaker": "user"})
            handler.send_json(200, {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                                    "finishReason": "STOP", "index": 0}],
                                    "usageMetadata": USAGE})
            return
        if not self.is_model_call(request):
            handler.send_json(404, {"error": {"code": 404, "message": f"not scripted: {request.path}",
                                              "status": "NOT_FOUND"}})
            return
        parts: list[dict[str, Any]] = []
        for item in self.next_reply():
            if isinstance(item, ToolCall):
                parts.append({"functionCall": {"name": item.name, "args": item.args, "id": item.call_id}})
            else:
                parts.append({"text": item})
        events: list[tuple[str | None, Any]] = [
            (None, {"candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}],
                    "modelVersion": "fake-model"})
            for part in parts[:-1]
        ]
        events.append((None, {"candidates": [{"content": {"role": "model", "parts": parts[-1:]},
                                              "finishReason": "STOP", "index": 0}],
                              "usageMetadata": USAGE, "modelVersion": "fake-model"}))
        handler.send_sse(events)


def gemini_env(server_url: str) -> dict[str, str]:
    """Environment that points Gemini CLI at `server_url`, trusting the workspace, no telemetry."""
    return {"GEMINI_API_KEY": "test-key", "GOOGLE_GEMINI_BASE_URL": server_url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_TELEMETRY_ENABLED": "false"}


def gemini_settings() -> dict[str, Any]:
    """~/.gemini/settings.json for a headless offline run (API-key auth, no update checks)."""
    return {"security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False}}
