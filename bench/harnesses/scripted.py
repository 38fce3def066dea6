"""What the scripted model servers share: a threaded local HTTP server that records every request
body and answers the model calls from a script the test writes.

A script is a list of replies, one per model call: a plain string is an assistant text, `tool(...)`
a tool call the agent runs. When the script runs out the server answers `DEFAULT_TEXT`. The
protocol (SSE framing, endpoints) is the subclass's: `responses_server.py`, `gemini_server.py`,
`chat_server.py`.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

DEFAULT_TEXT = "OK from the scripted model"


@dataclass
class ToolCall:
    name: str
    args: dict[str, Any]
    call_id: str = ""


def tool(name: str, **args: Any) -> ToolCall:
    """One tool call the model asks for (the harness's own tool name and argument shape)."""
    return ToolCall(name, args)


Reply = str | ToolCall | list[ToolCall]


@dataclass
class Recorded:
    method: str
    path: str
    query: str
    body: Any

    def text(self) -> str:
        """The whole body as JSON text (for "does the memory reach the model?")."""
        return json.dumps(self.body, ensure_ascii=False)


@dataclass
class ScriptedServer:
    """Start with `with Subclass() as server:`; `server.url`, `server.requests`, `server.script(...)`."""

    requests: list[Recorded] = field(default_factory=list)
    _script: list[Reply] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _calls: int = 0

    # -- the test's side ------------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def next_reply(self) -> list[str | ToolCall]:
        """The next scripted reply as a list of text pieces / tool calls (ids filled in)."""
        with self._lock:
            reply = self._script.pop(0) if self._script else DEFAULT_TEXT
            self._calls += 1
            n = self._calls
        items = reply if isinstance(reply, list) else [reply]
        out: list[str | ToolCall] = []
        for i, item in enumerate(items):
            if isinstance(item, ToolCall) and not item.call_id:
                item = ToolCall(item.name, item.args, f"call_{n}_{i}")
            out.append(item)
        return out

    def model_requests(self) -> list[Recorded]:
        """The requests that asked the model for a turn (subclasses say which)."""
        return [r for r in self.requests if self.is_model_call(r)]

    def is_model_call(self, request: Recorded) -> bool:  # pragma: no cover - overridden
        return True

    # -- the protocol's side (subclasses) -------------------------------------------------------
    def handle(self, handler: "_Handler", request: Recorded) -> None:  # pragma: no cover - overridden
        handler.send_json(404, {"error": "not scripted"})

    # -- lifecycle ------------------------------------------------------------------------------
    def __enter__(self) -> "ScriptedServer":
        owner = self

        class Handler(_Handler):
            server_owner = owner

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class _Handler(BaseHTTPRequestHandler):
    server_owner: ScriptedServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:  # quiet test output
        pass

    def _record(self, method: str) -> Recorded:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        parts = urlsplit(self.path)
        request = Recorded(method, parts.path, parts.query, body)
        with self.server_owner._lock:
            self.server_owner.requests.append(request)
        return request

    def do_GET(self) -> None:
        self.server_owner.handle(self, self._record("GET"))

    def do_POST(self) -> None:
        self.server_owner.handle(self, self._record("POST"))

    def send_json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events: list[tuple[str | None, Any]]) -> None:
        """`events`: (event name or None, JSON data); `[DONE]` strings are sent as they are."""
        chunks = []
        for name, data in events:
            payload = data if isinstance(data, str) else json.dumps(data)
            chunks.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
        body = "".join(chunks).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
