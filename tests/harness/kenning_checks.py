"""What the real-harness tests (test_codex.py, test_gemini.py, test_opencode.py) ask of kenning:
`kenning connect` as a user runs it, memories stored over the daemon's API, and what the daemon
kept of a session (its key, observer state, episodes) read back over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

KENNING = str(Path(sys.executable).with_name("kenning"))
# Text of the harnesses and of kenning itself that must never be stored as the conversation
HARNESS_MARKERS = ("<kenning-memories>", "<memory-feedback>", "Memories from earlier sessions", "<hook_context>",
                   "<environment_context>", "<session_context>", "AGENTS.md", "skills_instructions",
                   "You are a coding agent", "This is the Gemini CLI", "You are opencode", "You are OpenCode",
                   "<system_reminder>", "<current_datetime>", "You are the GitHub Copilot CLI")


def bare_env(**extra: str) -> dict[str, str]:
    """This process's environment without KENNING_* (a harness's hooks must carry what they need)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    env.update(extra)
    return env


def connect(harness: str, *args: str, daemon: Any = None, port: int | None = None, cwd: Path | None = None,
            **env: str) -> subprocess.CompletedProcess:
    """`kenning connect <harness> …` in a shell pointing at `daemon` (or at a closed `port`)."""
    kenning_env = {"KENNING_HOME": str(daemon.home), "KENNING_PORT": str(daemon.port)} if daemon is not None else {}
    if port is not None:
        kenning_env["KENNING_PORT"] = str(port)
    result = subprocess.run([KENNING, "connect", harness, *args], capture_output=True, text=True, cwd=cwd,
                            env=bare_env(**kenning_env, **env), timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


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
