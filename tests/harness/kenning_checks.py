"""What the real-harness tests (test_codex.py, test_gemini.py, test_opencode.py) check of kenning once it is
connected (`connect`, `bare_env`, `KENNING`: bench.harnesses.kenning_setup, which the benches share): memories
stored over the daemon's API, and what the daemon kept of a session (its key, observer state, episodes) read back
over HTTP."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from bench.harnesses.kenning_setup import HARNESS_MARKERS


def remember(daemon: Any, content: str, project: str, type: str = "decision", confidence: float = 1.0,
             applies: str | None = None) -> str:
    """Store a memory as `kenning remember` does; `applies='project'` makes it a project-scope rule, the only
    kind besides pinned or verified memories that opens a session (issue 31)."""
    body: dict[str, Any] = {"content": content, "type": type, "project": project, "confidence": confidence}
    if applies is not None:
        body["applies"] = applies
    answer = httpx.post(f"{daemon.base_url}/api/memory/remember", timeout=60, json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()["id"]


def session_of(daemon: Any, project: str, harness: str) -> dict[str, Any]:
    sessions = daemon.get("/api/sessions", project=project).json()["sessions"]
    found = [s for s in sessions if s.get("harness") == harness]
    assert len(found) == 1, sessions
    return found[0]


def observed(daemon: Any, session_key: str) -> dict[str, Any]:
    return daemon.get(f"/api/observer/sessions/{session_key}").json()


def episodes(daemon: Any, session_key: str, wait_s: float = 30.0) -> list[str]:
    """The session's episodes (waits for the summary job when session end queued them)."""
    deadline = time.monotonic() + wait_s
    while True:
        items = daemon.get("/api/memory", session_key=session_key, type="episode", limit=100).json()["items"]
        if items or time.monotonic() > deadline:
            return [m["content"] for m in items]
        time.sleep(0.5)


def summarized(daemon: Any, session_key: str, wait_s: float = 60.0) -> dict[str, Any]:
    """The session's detail once its summary job has finished (done or failed): the episodes are stored before the
    job's extraction ends, so a check of what the job wrote waits for it."""
    deadline = time.monotonic() + wait_s
    while True:
        detail: dict[str, Any] = daemon.get(f"/api/sessions/{session_key}").json()
        job = detail.get("summary_job") or {}
        if job.get("status") not in ("pending", "leased", "running") or time.monotonic() > deadline:
            return detail
        time.sleep(0.5)


def stored_texts(daemon: Any, session_key: str) -> list[str]:
    """Every memory the session produced (episodes and anything extracted)."""
    return [m["content"] for m in daemon.get("/api/memory", session_key=session_key, limit=500).json()["items"]]


def assert_no_harness_text(texts: list[str]) -> None:
    for text in texts:
        for marker in HARNESS_MARKERS:
            assert marker not in text, f"harness text {marker!r} stored: {text[:300]!r}"


def request_messages(body: Any) -> list[str]:
    """The texts of one model request, one per message/part (for "which message carried it")."""
    return [json.dumps(item, ensure_ascii=False) for item in _messages(body)]


def _messages(body: Any) -> list[Any]:
    if not isinstance(body, dict):
        return []
    for key in ("input", "messages", "contents"):
        if isinstance(body.get(key), list):
            extra = [body["systemInstruction"]] if isinstance(body.get("systemInstruction"), dict) else []
            return [*extra, *body[key]]
    return []
