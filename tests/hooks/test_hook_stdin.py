"""A harness that never closes the hook's stdin holds no hook (issue 33, item 4).

`kenning hook <event>` as a real subprocess whose stdin pipe stays open: with a complete payload it
handles the event and exits 0; with half a payload or none it exits 0 having sent nothing. Before
issue 33 the hook read stdin to EOF and ran until it was killed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

KENNING = str(Path(sys.executable).with_name("kenning"))
ENDS_WITHIN_S = 60  # a bound for the test to give up on a hung hook (no timing is asserted)


def _hook_with_open_stdin(event: str, data: bytes, env: dict[str, str]) -> tuple[int, bytes]:
    """Run the hook, write `data` on its stdin and never close it; its exit code and stdout."""
    proc = subprocess.Popen([KENNING, "hook", event], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        if data:
            proc.stdin.write(data)
            proc.stdin.flush()
        try:
            code = proc.wait(timeout=ENDS_WITHIN_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"`kenning hook {event}` still waiting on its open stdin after {ENDS_WITHIN_S} s")
        return code, proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()


def _prompt_payload(session_id: str, cwd: str, prompt: str) -> bytes:
    return json.dumps({"session_id": session_id, "transcript_path": "", "cwd": cwd, "permission_mode": "default",
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt}).encode()


def test_a_complete_payload_without_eof_is_handled_and_the_hook_exits(daemon, tmp_path):
    env = {**os.environ, **daemon.env}
    session_id = str(uuid.uuid4())
    code, out = _hook_with_open_stdin("user-prompt-submit",
                                      _prompt_payload(session_id, str(tmp_path), "where do the stdin tests live?"), env)
    assert code == 0, out
    with daemon.client() as http:
        prompts = http.get(f"/api/sessions/{session_id}").json()["prompts"]
    assert [p["prompt"] for p in prompts] == ["where do the stdin tests live?"]


@pytest.mark.parametrize("written", [b"", b'{"session_id": "half-', b'{"session_id": "x", "prompt": "no end"'],
                         ids=["nothing", "half-a-key", "no-closing-brace"])
def test_half_a_payload_or_none_without_eof_sends_nothing_and_the_hook_exits(daemon, tmp_path, written):
    env = {**os.environ, **daemon.env}
    code, out = _hook_with_open_stdin("user-prompt-submit", written, env)
    assert code == 0 and out == b""
    with daemon.client() as http:
        assert http.get("/api/sessions/x").status_code == 404  # nothing reached the daemon
