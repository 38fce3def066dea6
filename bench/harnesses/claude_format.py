"""Claude Code 2.1.328 transcripts and hook payloads, built from a transcript the real CLI wrote
(data/claude-code-2.1.328-transcript.jsonl, captured headless against a scripted model server):
every harness entry (queue operations, attachments, api-request blobs with the system reminder,
cost state …) is kept; the typed prompts and the assistant's text are ours."""

from __future__ import annotations

import copy
import json
import uuid
from pathlib import Path

SAMPLE = [json.loads(line) for line in (Path(__file__).parent / "data" / "claude-code-2.1.328-transcript.jsonl")
          .read_text().splitlines() if line.strip()]


def _first(kind: str, pred=lambda e: True) -> dict:
    return next(e for e in SAMPLE if e.get("type") == kind and pred(e))


def transcript_lines(session_id: str, turns: list[tuple[str, str]]) -> list[dict]:
    """One entry list per Claude Code's format: per turn the typed prompt, the harness entries
    the CLI writes around it, then the assistant's text."""
    typed = _first("user", lambda e: isinstance(e["message"]["content"], str))
    answer = _first("assistant", lambda e: e["message"]["content"][0].get("type") == "text")
    harness = [e for e in SAMPLE if e.get("type") in ("attachment", "api-request-blob", "api-request", "atis-latch")]
    lines = [copy.deepcopy(e) for e in SAMPLE if e.get("type") == "queue-operation"]
    for prompt, reply in turns:
        user = copy.deepcopy(typed)
        user["message"]["content"] = prompt
        user["uuid"] = str(uuid.uuid4())
        lines.append(user)
        lines += copy.deepcopy(harness)
        assistant = copy.deepcopy(answer)
        assistant["message"]["content"] = [{"type": "text", "text": reply}]
        assistant["uuid"] = str(uuid.uuid4())
        lines.append(assistant)
        lines.append({"type": "last-prompt", "lastPrompt": prompt, "sessionId": session_id})
    lines += [copy.deepcopy(e) for e in SAMPLE if e.get("type") in ("system", "cost-state")]
    for line in lines:
        if "sessionId" in line:
            line["sessionId"] = session_id
    return lines


def write_session(projects: Path, cwd: str, session_id: str, turns: list[tuple[str, str]]) -> Path:
    """Write the transcript where Claude Code keeps it (~/.claude/projects/<cwd with - for />/<id>.jsonl)."""
    folder = projects / cwd.replace("/", "-")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in transcript_lines(session_id, turns)))
    return path


def payload(event: str, session_id: str, cwd: str, transcript: str, **extra) -> dict:
    """A hook payload shaped as Claude Code 2.1.328 sends it (see /work/shared/harness/claude-code)."""
    common = {"session_id": session_id, "transcript_path": transcript, "cwd": cwd}
    shapes = {
        "session-start": {"hook_event_name": "SessionStart", "source": "startup"},
        "user-prompt-submit": {"hook_event_name": "UserPromptSubmit", "permission_mode": "default"},
        "stop": {"hook_event_name": "Stop", "stop_hook_active": False},
        "pre-compact": {"hook_event_name": "PreCompact", "trigger": "auto"},
        "session-end": {"hook_event_name": "SessionEnd", "reason": "other"},
    }
    return {**common, **shapes[event], **extra}
