"""Each hook request names its session in X-Kenning-Session (issue 36), so a balancer in front of
several daemons on one PostgreSQL can keep a session on one daemon (docs/teams.md). The balancer
is a remote service: here a local HTTP server that records what reaches it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Balancer(BaseHTTPRequestHandler):
    seen: list[dict[str, str]] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Balancer.seen.append({k.lower(): v for k, v in self.headers.items()})
        body = b'{"inject": ""}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_hook_request_names_its_session_for_the_balancer(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Balancer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = {**os.environ, "KENNING_HOME": str(tmp_path), "KENNING_URL": f"http://127.0.0.1:{server.server_port}"}
        for key in ("sess-4f2a", "bad\u00e9key"):
            payload = {"session_id": key, "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
                       "prompt": "where do the deploy scripts live?"}
            done = subprocess.run([sys.executable, "-m", "kenning.hooks", "user-prompt-submit"],
                                  input=json.dumps(payload), env=env, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
    finally:
        server.shutdown()
    assert len(Balancer.seen) == 2
    assert Balancer.seen[0]["x-kenning-session"] == "sess-4f2a"
    assert "x-kenning-session" not in Balancer.seen[1]  # not ASCII: the body carries the key, no header
