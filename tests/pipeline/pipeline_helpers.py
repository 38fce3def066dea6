"""Helpers for pipeline tests: a real local HTTP server speaking the Ollama and OpenAI
protocols with scripted answers, and small builders for settings and canned outputs."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TASK_MARK = "<<<KENNING_TASK:"


def task_of(prompt: str) -> str:
    start = prompt.find(TASK_MARK)
    if start < 0:
        return ""
    return prompt[start + len(TASK_MARK): prompt.find(">>>", start)]


@dataclass
class Reply:
    """What the fake server answers: text (200), or an HTTP error status, after an optional delay."""

    text: str = "{}"
    status: int = 200
    delay_s: float = 0.0
    prompt_tokens: int | None = None
    output_tokens: int | None = None


@dataclass
class FakeLLM:
    """A real HTTP server on 127.0.0.1. `script(task, prompt) -> Reply | str` decides each answer."""

    script: Callable[[str, str], Any] = lambda task, prompt: Reply("{}")
    requests: list[dict[str, Any]] = field(default_factory=list)
    on_request: Callable[[str, str], None] | None = None
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def generations(self, task: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["kind"] == "generate" and (task is None or r["task"] == task)]

    def answer(self, prompt: str) -> Reply:
        task = task_of(prompt)
        if self.on_request:
            self.on_request(task, prompt)
        reply = self.script(task, prompt)
        reply = reply if isinstance(reply, Reply) else Reply(str(reply))
        self.requests.append({"kind": "generate", "task": task, "prompt": prompt})
        if reply.delay_s:
            time.sleep(reply.delay_s)
        return reply


def _handler(fake: FakeLLM):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, body: Any) -> None:
            data = (body if isinstance(body, str) else json.dumps(body)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client timed out on purpose
                pass

        def do_GET(self) -> None:
            fake.requests.append({"kind": "get", "path": self.path, "task": ""})
            if self.path == "/api/tags":
                self._send(200, {"models": [{"name": "fake:1b"}]})
            elif self.path.endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": "fake-chat"}]})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            if self.path == "/api/generate":
                prompt = body["prompt"]
                assert body.get("stream") is False, "ollama calls must set stream:false"
            elif self.path.endswith("/chat/completions"):
                prompt = body["messages"][-1]["content"]
            else:
                self._send(404, {"error": f"no route {self.path}"})
                return
            reply = fake.answer(prompt)
            if reply.status != 200:
                self._send(reply.status, {"error": f"canned failure {reply.status}"})
                return
            ptoks = reply.prompt_tokens if reply.prompt_tokens is not None else len(prompt) // 4
            otoks = reply.output_tokens if reply.output_tokens is not None else len(reply.text) // 4
            if self.path == "/api/generate":
                self._send(200, {"model": body.get("model"), "response": reply.text, "done": True,
                                 "prompt_eval_count": ptoks, "eval_count": otoks})
            else:
                self._send(200, {
                    "id": "chatcmpl-1", "object": "chat.completion", "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply.text}}],
                    "usage": {"prompt_tokens": ptoks, "completion_tokens": otoks,
                              "total_tokens": ptoks + otoks},
                })

    return Handler


FAST_WORKER = {"poll_ms": 100, "backoff_base_ms": 10, "backoff_cap_ms": 100, "backoff_jitter_ms": 5}


def run_until(predicate: Callable[[], bool], timeout_s: float = 30.0, step_s: float = 0.05) -> bool:
    """Poll `predicate` until true (functional wait; never a timing assertion)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step_s)
    return predicate()


def ollama_llm(fake: FakeLLM, **extra: Any) -> dict:
    return {"provider": "ollama", "url": fake.url, "model": "fake:1b", "timeout_s": 10, **extra}


def openai_llm(fake: FakeLLM, **extra: Any) -> dict:
    return {"provider": "openai", "url": f"{fake.url}/v1", "model": "fake-chat", "timeout_s": 10, **extra}


def extraction_json(*facts: tuple[str, str, float], entities: list[dict] | None = None) -> str:
    return json.dumps({"facts": [{"content": c, "type": t, "confidence": p} for c, t, p in facts],
                       "entities": entities or []})


def start_fake_llm() -> FakeLLM:
    fake = FakeLLM()
    fake.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    threading.Thread(target=fake.server.serve_forever, daemon=True).start()
    return fake


def stop_fake_llm(fake: FakeLLM) -> None:
    fake.server.shutdown()
    fake.server.server_close()
