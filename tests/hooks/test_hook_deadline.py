"""The hook client: one wall-clock deadline against a trickling server, cheap imports, cheap config.

The servers here are real local TCP servers; the hook runs as the `kenning hook` process Claude
Code starts.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from kenning.hooks.transport import _simple_config, read_config

KENNING = str(Path(sys.executable).with_name("kenning"))
BODY_BYTES = 120  # trickled one byte per TRICKLE_S: a full answer would take a minute
TRICKLE_S = 0.5


class TricklingServer:
    """Answers every request with a 200 whose body arrives one byte every TRICKLE_S seconds."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.requests: list[bytes] = []
        self.bytes_sent: list[int] = []
        self.client_left = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            conn.settimeout(30)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            while len(body) < length:
                body += conn.recv(65536)
            self.requests.append(head + b"\r\n\r\n" + body)
            sent = 0
            try:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n" % BODY_BYTES)
                for _ in range(BODY_BYTES):
                    conn.sendall(b" ")
                    sent += 1
                    if self.client_left.wait(TRICKLE_S):
                        break
                    # a peer that has gone shows up as a readable EOF
                    conn.setblocking(False)
                    try:
                        if conn.recv(1) == b"":
                            self.client_left.set()
                    except BlockingIOError:
                        pass
                    finally:
                        conn.setblocking(True)
            except OSError:
                self.client_left.set()
            self.bytes_sent.append(sent)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def trickler():
    server = TricklingServer()
    yield server
    server.close()


def test_a_trickling_daemon_cannot_hold_the_hook_past_its_deadline(trickler, tmp_path):
    env = {**os.environ, "KENNING_HOME": str(tmp_path / "home"), "KENNING_URL": f"http://127.0.0.1:{trickler.port}",
           "KENNING_HOOK_TIMEOUT": "1"}
    stdin = json.dumps({"session_id": "s-trickle", "cwd": str(tmp_path), "hook_event_name": "SessionStart",
                        "source": "startup", "transcript_path": ""})
    # Per-operation timeouts would wait BODY_BYTES * TRICKLE_S = 60 s (each byte resets them); the
    # subprocess timeout below is half that, and the server must see the client leave mid-body.
    result = subprocess.run([KENNING, "hook", "session-start"], input=stdin.encode(), capture_output=True,
                            env=env, timeout=30)
    assert result.returncode == 0 and result.stdout == b"" and result.stderr == b""
    assert trickler.client_left.wait(30), "the server never saw the hook go"
    trickler.thread.join(30)
    assert len(trickler.requests) == 1 and trickler.bytes_sent and trickler.bytes_sent[0] < BODY_BYTES
    head = trickler.requests[0].split(b"\r\n\r\n")[0].decode().lower()
    assert head.startswith("post /api/hooks/session-start http/1.1")
    assert "content-type: application/json" in head and f"host: 127.0.0.1:{trickler.port}" in head


def test_the_hook_path_imports_no_heavy_module(tmp_path):
    """What `kenning hook` loads, with a config.yaml present and no daemon: no yaml, typer, rich, pydantic,
    fastapi, httpx, torch or numpy. With no daemon the event is spooled, and the spool redacts it first
    (issue 33: the secret scanner, detect-secrets, brings urllib.request / http.client / email / typing /
    pathlib); a hook that reaches its daemon loads none of those (tests/install/test_start_imports.py)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("# mine\nport: 1\nsessions:\n  hook_timeout_s: 0.5\npipeline:\n  enabled: false\n")
    code = (
        "import sys, kenning.cli.entry\n"
        "from kenning.hooks.claude_code import handle\n"
        "handle('session-start', '{\"session_id\": \"s\", \"cwd\": \"/tmp\"}')\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "KENNING_HOME": str(home)}
    for key in ("KENNING_PORT", "KENNING_URL", "KENNING_HOST"):
        env.pop(key, None)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    loaded = set(out.stdout.split())
    assert "kenning.hooks.transport" in loaded
    heavy = {"yaml", "typer", "rich", "pydantic", "fastapi", "httpx", "torch", "numpy"}
    assert not heavy & loaded, heavy & loaded


CONFIGS = [
    "",
    "port: 4001\n",
    "host: 127.0.0.1   # loopback\nport: 4002\nauth_token: 's3cr#t'\n",
    '---\nauth_token: "tok en"\nsessions:\n  latency_budget_ms: 300\n  hook_timeout_s: 1.5\nport: 4003\n',
    "pipeline:\n  enabled: false\n  stages:\n    - extract\n    - link\nsessions:\n  hook_timeout_s: 3 # slow disk\n",
    "embedding:\n  provider: bundled\nrecall:\n  default_limit: 5\nport: 4004\n",
    "notes: |\n  port: 9\n  host: elsewhere\nport: 4007\n".replace("notes: |", "notes:"),
]
NOT_SIMPLE = [
    "port: &p 4005\n",
    "sessions: {hook_timeout_s: 4}\n",
    "auth_token: |\n  multi\n",
    "\tport: 1\n",
    "? port\n: 4006\n",
    "notes: |\n  port: 9\nport: 4008\n",
]


@pytest.mark.parametrize("text", CONFIGS)
def test_the_cheap_config_reader_agrees_with_yaml(text, tmp_path):
    simple = _simple_config(text)
    assert simple is not None
    full = yaml.safe_load(text) or {}
    expected = {k: str(full[k]) for k in ("host", "port", "auth_token") if k in full}
    if "hook_timeout_s" in (full.get("sessions") or {}):
        expected["sessions"] = {"hook_timeout_s": str(full["sessions"]["hook_timeout_s"])}
    assert simple == expected


@pytest.mark.parametrize("text", NOT_SIMPLE)
def test_yaml_beyond_key_value_falls_back_to_the_yaml_parser(text, tmp_path):
    assert _simple_config(text) is None
    (tmp_path / "config.yaml").write_text(text)
    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        expected = {}
    assert read_config(str(tmp_path)) == (expected if isinstance(expected, dict) else {})
