"""`transcript_path` is untrusted (issue 26): hooks given /etc/passwd, /proc/self/environ, a FIFO,
/dev/zero, a symlink out of the harness folder or a 2 GB sparse file upload nothing, exit 0 and
come back within their deadline, and the daemon counts each refusal by reason. Real hook
processes, a real daemon, Claude Code-format payloads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from bench.harnesses.daemon import start_daemon
from bench.harnesses.claude_format import payload

HOOK = [sys.executable, "-m", "kenning.hooks"]
DEADLINE_S = 3  # KENNING_HOOK_TIMEOUT; session-end gets at least 10 s (it carries the transcript)
READING_EVENTS = (("session-start", {"source": "resume"}), ("pre-compact", {}), ("stop", {}), ("session-end", {}))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    user = base / "user"
    folder = user / ".claude" / "projects" / "-w-app"
    folder.mkdir(parents=True)
    daemon = start_daemon(base / "kenning", "sessions:\n  latency_budget_ms: 20000\n", {"HOME": str(user)})
    yield base, user, folder, daemon
    daemon.stop()


def _targets(base: Path, folder: Path) -> dict[str, tuple[str, str]]:
    """name → (transcript_path, the reason the reader gives)."""
    outside_fifo = base / "outside.fifo"
    if not outside_fifo.exists():
        os.mkfifo(outside_fifo)
    inside_fifo = folder / "fifo.jsonl"
    if not inside_fifo.exists():
        os.mkfifo(inside_fifo)
    link = folder / "link.jsonl"
    if not link.is_symlink():
        link.symlink_to("/etc/passwd")
    sparse = folder / "sparse.jsonl"
    if not sparse.exists():
        with open(sparse, "wb") as handle:
            handle.truncate(2 * 1024 ** 3)
    return {
        "etc-passwd": ("/etc/passwd", "outside_roots"),
        "proc-environ": ("/proc/self/environ", "outside_roots"),
        "dev-zero": ("/dev/zero", "outside_roots"),
        "fifo-outside": (str(outside_fifo), "outside_roots"),
        "fifo-inside": (str(inside_fifo), "not_regular"),
        "symlink-out": (str(link), "outside_roots"),
        "sparse-2gb": (str(sparse), "too_large"),
    }


@pytest.mark.parametrize("name", ["etc-passwd", "proc-environ", "dev-zero", "fifo-outside", "fifo-inside",
                                  "symlink-out", "sparse-2gb"])
def test_a_hostile_transcript_path_uploads_nothing(world, name):
    base, user, folder, daemon = world
    path, reason = _targets(base, folder)[name]
    env = {**os.environ, **daemon.env, "HOME": str(user), "KENNING_HOOK_TIMEOUT": str(DEADLINE_S)}
    key = f"hostile-{name}-{uuid.uuid4().hex[:6]}"
    before = httpx.get(f"{daemon.base_url}/api/diagnostics", timeout=120).json()
    counted_before = before["domains"]["connector"]["metrics"]["transcript_refusals"].get(reason, 0)
    for event, extra in READING_EVENTS:
        body = payload(event, key, str(base), path, **extra)
        # the timeout stands for "within its deadline": a FIFO used to hang the hook until killed (806 s)
        result = subprocess.run(HOOK + [event], input=json.dumps(body).encode(), capture_output=True, env=env,
                                timeout=max(DEADLINE_S, 10) + 20)
        assert result.returncode == 0 and result.stderr == b"", (event, result.stderr)
        assert b"root:" not in result.stdout and b"PATH=" not in result.stdout
    detail = httpx.get(f"{daemon.base_url}/api/sessions/{key}", timeout=30).json()
    assert detail["transcript"] is None
    stored = json.dumps(detail)
    assert "root:x:0:0" not in stored and "PATH=" not in stored
    memories = httpx.get(f"{daemon.base_url}/api/memory", params={"limit": 500}, timeout=30).text
    assert "root:x:0:0" not in memories and "/bin/bash" not in memories
    after = httpx.get(f"{daemon.base_url}/api/diagnostics", timeout=120).json()
    assert after["domains"]["connector"]["metrics"]["transcript_refusals"].get(reason, 0) >= counted_before + 2
    assert not (daemon.home / "spool").exists() or not list((daemon.home / "spool").glob("e-*.json"))
