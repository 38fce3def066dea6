"""Claude Code hook entry points: stdin JSON in, daemon over HTTP, documented stdout out.

Claude Code runs `kenning hook <event>` with the event's JSON on stdin (session_id,
transcript_path, cwd, hook_event_name, plus prompt / source / tool_* / trigger / reason …).
SessionStart, UserPromptSubmit and PostToolUse (the observer's step injection) answer with
`{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}` on stdout; the
other events print nothing. This module is a process boundary: it never raises, always
lets the caller exit 0, and imports only a few standard modules (see hooks/transport.py) so
a hook costs a Python start plus one short HTTP round trip under one deadline.
"""

from __future__ import annotations

import json
import os
import re
import sys

from kenning.hooks.transport import Deadline, daemon_endpoint, post

TYPE_CHECKING = False
if TYPE_CHECKING:  # `typing` costs a few ms of every hook's start; annotations are strings here
    from typing import Any

EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "post-tool-use": "PostToolUse",
    "pre-compact": "PreCompact",
    "stop": "Stop",
    "session-end": "SessionEnd",
}
INJECTING = {"session-start", "user-prompt-submit", "post-tool-use"}
CARRIES_TRANSCRIPT_MIN_S = 10.0  # session-end uploads the whole transcript: never less than this
TAIL_BYTES = 256 * 1024
MAX_TRANSCRIPT_BYTES = 20 * 1024 * 1024
_FEEDBACK_TAG = re.compile(r"<memory-feedback>\s*(\{.*?\})\s*</memory-feedback>", re.DOTALL)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")


# -- reading the payload ---------------------------------------------------------------------
def project_of(cwd: str | None) -> str | None:
    """The project a directory belongs to: the git root's name, else the directory's name."""
    if not cwd:
        return None
    for candidate in _upwards(cwd):
        if os.path.exists(os.path.join(candidate, ".git")):
            return os.path.basename(candidate) or None
    return os.path.basename(os.path.normpath(cwd)) or None


def _upwards(path: str) -> list[str]:
    """`path` and each of its parents, nearest first."""
    current = os.path.normpath(os.path.abspath(path))
    chain = [current]
    while os.path.dirname(current) != current:
        current = os.path.dirname(current)
        chain.append(current)
    return chain


def git_branch(cwd: str | None) -> str | None:
    if not cwd:
        return None
    for candidate in _upwards(cwd):
        head = os.path.join(candidate, ".git", "HEAD")
        if os.path.isfile(head):
            try:
                with open(head, encoding="utf-8") as handle:
                    text = handle.read().strip()
            except (OSError, ValueError):
                return None
            return text.rsplit("/", 1)[-1] if text.startswith("ref:") else None
    return None


def read_tail(path: str | None, limit: int = TAIL_BYTES) -> str:
    if not path:
        return ""
    try:
        with open(os.path.expanduser(path), "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            data = handle.read()
    except OSError:
        return ""
    text = data.decode("utf-8", "replace")
    return text.split("\n", 1)[1] if size > limit and "\n" in text else text


def read_whole(path: str | None) -> str | None:
    if not path:
        return None
    try:
        full = os.path.expanduser(path)
        if os.stat(full).st_size > MAX_TRANSCRIPT_BYTES:
            return None
        with open(full, encoding="utf-8", errors="replace") as handle:  # the daemon refuses lone surrogates
            return handle.read()
    except (OSError, ValueError):
        return None


def _message_texts(tail: str, role: str) -> list[str]:
    texts = []
    for line in tail.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) else None
        if not isinstance(message, dict) or message.get("role") != role:
            continue
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            parts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
            if any(parts):
                texts.append("\n".join(parts))
    return texts


def recent_context(transcript_path: str | None, chars: int = 2000) -> str:
    """The last user/assistant words of a transcript (for resumed or compacted sessions)."""
    tail = read_tail(transcript_path, 64 * 1024)
    texts = _message_texts(tail, "user")[-3:] + _message_texts(tail, "assistant")[-2:]
    return "\n".join(texts)[-chars:]


def parse_feedback(text: str | None) -> dict[str, float]:
    """Memory feedback from an agent message: `<memory-feedback>{"id": score}</memory-feedback>`."""
    if not text:
        return {}
    candidates = _FEEDBACK_TAG.findall(text) or _JSON_OBJECT.findall(text)[-1:]
    for raw in reversed(candidates):
        try:
            data = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        scores = {
            str(k): float(v) for k, v in data.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and -1.0 <= v <= 1.0
        }
        if scores:
            return scores
    return {}


# -- one event --------------------------------------------------------------------------------
def _tool_response(response: Any, limit: int = 8000) -> Any:
    """The tool's response as the observer reads it: a dict or string, long texts cut to `limit`."""
    if isinstance(response, dict):
        return {k: (v[:limit] if isinstance(v, str) else v) for k, v in list(response.items())[:20]
                if isinstance(v, (str, int, float, bool, type(None))) or k == "filenames"}
    return str(response)[:limit] if response else None


def _body(event: str, payload: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    key = payload.get("session_id")
    if not isinstance(key, str) or not key.strip():
        return None
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    transcript_path = payload.get("transcript_path") if isinstance(payload.get("transcript_path"), str) else None
    if event == "session-start":
        source = payload.get("source") if isinstance(payload.get("source"), str) else "startup"
        context_parts = [f"branch: {b}" for b in [git_branch(cwd)] if b]
        if source in ("resume", "compact", "clear"):
            context_parts.append(recent_context(transcript_path))
        return "/api/hooks/session-start", {
            "session_key": key, "harness": "claude-code", "project": project_of(cwd), "cwd": cwd,
            "context": "\n".join(p for p in context_parts if p) or None, "source": source,
        }
    if event == "user-prompt-submit":
        prompt = payload.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return None
        return "/api/hooks/user-prompt-submit", {"session_key": key, "prompt": prompt}
    if event == "post-tool-use":
        tool_input = payload.get("tool_input")
        return "/api/hooks/post-tool-use", {
            "session_key": key, "tool_name": payload.get("tool_name"),
            "tool_input": tool_input if isinstance(tool_input, dict) else None,
            "tool_response": _tool_response(payload.get("tool_response")), "cwd": cwd,
        }
    if event == "pre-compact":
        return "/api/hooks/pre-compaction", {
            "session_key": key, "context": recent_context(transcript_path, 8000) or None,
            "transcript": read_whole(transcript_path),  # its episodes are stored before compaction
            "trigger": payload.get("trigger") if isinstance(payload.get("trigger"), str) else "compact",
        }
    if event == "stop":
        message = payload.get("last_assistant_message")
        if not isinstance(message, str):
            texts = _message_texts(read_tail(transcript_path), "assistant")
            message = texts[-1] if texts else ""
        return "/api/hooks/feedback", {"session_key": key, "memory_feedback": parse_feedback(message)}
    if event == "session-end":
        return "/api/hooks/session-end", {
            "session_key": key, "transcript": read_whole(transcript_path),
            "reason": payload.get("reason") if isinstance(payload.get("reason"), str) else None,
        }
    return None


def handle(event: str, stdin_text: str, environ: dict[str, str] | None = None) -> str:
    """What to print for one hook invocation ('' when nothing should be printed). Never raises.

    One wall-clock deadline (the hook timeout, KENNING_HOOK_TIMEOUT or sessions.hook_timeout_s)
    covers the whole exchange with the daemon; session-end, which uploads the transcript, gets
    at least CARRIES_TRANSCRIPT_MIN_S.
    """
    try:
        if event not in EVENTS:
            return ""
        base_url, token, timeout = daemon_endpoint(environ)
        if event == "session-end":
            timeout = max(timeout, CARRIES_TRANSCRIPT_MIN_S)
        deadline = Deadline(timeout)
        payload = json.loads(stdin_text) if stdin_text.strip() else None
        if not isinstance(payload, dict):
            return ""
        request = _body(event, payload)
        if request is None:
            return ""
        path, body = request
        if path == "/api/hooks/feedback" and not body["memory_feedback"]:
            return ""
        answer = post(base_url, path, body, token=token, timeout=timeout, deadline=deadline)
        if event not in INJECTING or not answer:
            return ""
        inject = answer.get("inject")
        if not isinstance(inject, str) or not inject.strip():
            return ""
        return json.dumps(
            {"hookSpecificOutput": {"hookEventName": EVENTS[event], "additionalContext": inject}}
        )
    except Exception:  # noqa: BLE001 - process boundary: the agent must never be blocked
        return ""


def main(argv: list[str] | None = None) -> int:
    """`python -m kenning.hooks <event>`: read stdin, print the answer, exit 0."""
    args = sys.argv[1:] if argv is None else argv
    event = args[0] if args else ""
    try:
        stdin_text = sys.stdin.read() if not sys.stdin.isatty() else ""
    except (OSError, ValueError):
        stdin_text = ""
    out = handle(event, stdin_text)
    if out:
        try:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    return 0
