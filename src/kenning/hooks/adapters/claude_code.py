"""Claude Code hooks (`kenning hook <event>`, installed by `kenning connect claude-code`).

Claude Code 2.1.x runs the hook command with the event's JSON on stdin: session_id,
transcript_path (its JSONL under `~/.claude/projects`), cwd, hook_event_name, and per event
`source` (SessionStart), `prompt` (UserPromptSubmit), tool_name / tool_input / tool_response
(PostToolUse — **successful tools only**), tool_name / tool_input / `error` (PostToolUseFailure —
a failed tool, e.g. a Bash command exiting non-zero), `last_assistant_message` (Stop, each turn),
`trigger` (PreCompact), `reason` (SessionEnd). It reads `hookSpecificOutput.additionalContext` of
SessionStart, UserPromptSubmit and PostToolUse into the model's request (as a system reminder).

Each event becomes one request to the daemon's hook routes, i.e. one core.events event there:

    SessionStart       → session-start   (SessionStarted; branch, and for resume/compact/clear the
                                          conversation's last words read with the transcript reader)
    UserPromptSubmit   → user-prompt-submit (PromptSubmitted)
    PostToolUse        → post-tool-use   (ToolResult: success, unless the response is interrupted / an error
                                          or a Bash output carries an error line: `is_error`, decided here)
    PostToolUseFailure → post-tool-use   (ToolResult, success false, `error`)
    Stop               → feedback        (TurnEnded: `<memory-feedback>` of the last message, if any)
    PreCompact         → pre-compaction  (Compacted, with the transcript so far)
    SessionEnd         → session-end     (SessionEnded, with the whole transcript)

The daemon reads the transcript with kenning.sessions.transcript (typed prompts and assistant text
only; harness entries skipped). Event names are accepted as Claude Code spells them or in the
kebab-case of kenning's installed commands (`kenning hook post-tool-use-failure`).
"""

from __future__ import annotations

import os

from kenning.hooks.adapters import hookrun
from kenning.hooks.adapters.hookrun import Context, inject_of, string
from kenning.hooks.jsonc import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kenning.hooks.wire import Answer, HookSpecificOutput, Payload, Request, ToolUseBody

HARNESS = "claude-code"
EVENTS = {  # kenning's installed name → Claude Code's event name
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "post-tool-use": "PostToolUse",
    "post-tool-use-failure": "PostToolUseFailure",
    "pre-compact": "PreCompact",
    "stop": "Stop",
    "session-end": "SessionEnd",
}
INJECTING = frozenset({"SessionStart", "UserPromptSubmit", "PostToolUse"})
CARRIES = frozenset({"PreCompact", "SessionEnd"})  # they upload the whole transcript
MAX_OUTPUT_CHARS = 8000
RESUMED = ("resume", "compact", "clear")


def claude_event(name: str) -> str:
    """Claude Code's name of an event given either spelling ('' when it is not one)."""
    if name in EVENTS:
        return EVENTS[name]
    return name if name in EVENTS.values() else ""


def git_branch(cwd: str | None) -> str | None:
    if not cwd:
        return None
    current = os.path.normpath(os.path.abspath(cwd))
    while True:
        head = os.path.join(current, ".git", "HEAD")
        if os.path.isfile(head):
            try:
                with open(head, encoding="utf-8") as handle:
                    text = handle.read().strip()
            except (OSError, ValueError):
                return None
            return text.rsplit("/", 1)[-1] if text.startswith("ref:") else None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def recent_context(text: str, chars: int = 2000) -> str:
    """The conversation's last words (3 user prompts, 2 assistant answers) of a transcript tail,
    read with the transcript reader: never a system reminder or an injected memory block."""
    if not text:
        return ""
    from kenning.sessions.transcript import parse_transcript  # only on resume / compaction

    turns = parse_transcript(text)
    users = [t.text for t in turns if t.role == "user"][-3:]
    answers = [t.text for t in turns if t.role == "assistant"][-2:]
    return "\n".join(users + answers)[-chars:]


def last_assistant_raw(tail: str) -> str:
    """The text blocks of the last `assistant` entry of a Claude Code transcript tail, as written
    (with any `<memory-feedback>` block: this is where the agent rates its memories)."""
    for line in reversed(tail.splitlines()):
        if '"assistant"' not in line:
            continue
        try:
            entry = loads(line)
        except ValueError:
            continue
        message = entry.get("message") if isinstance(entry, dict) and entry.get("type") == "assistant" else None
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            return content
        texts = [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
        if any(texts):
            return "\n".join(texts)
    return ""


def tool_response(response: object, limit: int = MAX_OUTPUT_CHARS) -> dict[str, object] | str | None:
    """The tool's response as the observer reads it: a dict of scalars or a string, cut to `limit`."""
    if isinstance(response, dict):
        return {k: (v[:limit] if isinstance(v, str) else v) for k, v in list(response.items())[:20]
                if isinstance(v, (str, int, float, bool, type(None))) or k == "filenames"}
    return str(response)[:limit] if response else None


def parse_feedback(text: str | None) -> dict[str, float]:
    """`<memory-feedback>{"id": score}</memory-feedback>` in an agent message (core.events.parse_feedback)."""
    if not text or "{" not in text:
        return {}
    from kenning.core.events import parse_feedback as parse  # only when there is JSON to read

    return parse(text)


def requests(event: str, payload: Payload, ctx: Context) -> list[Request]:
    name = claude_event(event)
    key = string(payload, "session_id")
    if not name or not key or not key.strip():
        return []
    cwd = string(payload, "cwd")
    transcript_path = string(payload, "transcript_path")
    if name == "SessionStart":
        source = string(payload, "source") or "startup"
        parts = [f"branch: {b}" for b in [git_branch(cwd)] if b]
        if source in RESUMED:
            parts.append(recent_context(ctx.tail(transcript_path, 64 * 1024)))
        return [hookrun.session_start(key, HARNESS, payload, source=source, context="\n".join(p for p in parts if p))]
    if name == "UserPromptSubmit":
        return hookrun.prompt_submit(key, string(payload, "prompt"))
    if name in ("PostToolUse", "PostToolUseFailure"):
        tool_input = payload.get("tool_input")
        body: ToolUseBody = {
            "session_key": key, "harness": HARNESS, "tool_name": string(payload, "tool_name"),
            "tool_input": tool_input if isinstance(tool_input, dict) else None, "cwd": cwd,
            "tool_use_id": string(payload, "tool_use_id"),
        }
        if name == "PostToolUse":  # the verdict: an interrupted / error response, a Bash output with an error line
            body["tool_response"] = response = tool_response(payload.get("tool_response"))
            hookrun.judge(body, body["tool_name"], response, MAX_OUTPUT_CHARS)
        else:  # a failed tool: Claude Code gives the error text, never a tool_response
            body["is_error"] = True
            body["error"] = (string(payload, "error") or "tool failed")[:MAX_OUTPUT_CHARS]
        return [("/api/hooks/post-tool-use", body)]
    if name == "PreCompact":
        transcript = ctx.whole(transcript_path)
        return [("/api/hooks/pre-compaction", {
            # the whole transcript through the reader, entry by entry: a byte slice of it started mid-entry, the
            # reader took it for plain text and the checkpoint kept Claude Code's own JSON (issue 33)
            "session_key": key, "context": recent_context(transcript or "", 8000) or None,
            "transcript": transcript, "trigger": string(payload, "trigger") or "compact",
        })]
    if name == "Stop":
        message = string(payload, "last_assistant_message")
        if message is None:  # older payloads: the last assistant entry of the transcript
            message = last_assistant_raw(ctx.tail(transcript_path))
        scores = parse_feedback(message)
        return [("/api/hooks/feedback", {"session_key": key, "memory_feedback": scores})] if scores else []
    if name == "SessionEnd":
        return [("/api/hooks/session-end", {
            "session_key": key, "transcript": ctx.whole(transcript_path), "reason": string(payload, "reason"),
        })]
    return []


def render(event: str, answer: Answer) -> str:
    """Claude Code's stdout: the injection as `additionalContext` of the events that take one; at
    session start with no daemon, hookrun's notice as `systemMessage` (shown to the user, not the model)."""
    name = claude_event(event)
    notice = answer.get("notice") if isinstance(answer, dict) else None
    if isinstance(notice, str) and name == "SessionStart":
        return dumps({"systemMessage": notice})
    inject = inject_of(answer)
    if name not in INJECTING or not inject:
        return ""
    out: HookSpecificOutput = {"hookSpecificOutput": {"hookEventName": name, "additionalContext": inject}}
    return dumps(out)


def handle(event: str, stdin_text: str, environ: dict[str, str] | None = None) -> str:
    """What to print for one Claude Code hook invocation ('' when nothing). Never raises."""
    return hookrun.handle(HARNESS, claude_event(event) or event, stdin_text, requests, render, CARRIES, environ)


def main(argv: list[str] | None = None) -> int:
    import sys

    args = sys.argv[1:] if argv is None else argv
    return hookrun.main(HARNESS, [claude_event(args[0]) if args else ""], requests, render, CARRIES)
