"""Codex CLI hooks (`kenning hook codex <Event>`, installed by `kenning connect codex`).

Codex 0.169 sends Claude-Code-shaped payloads (session_id, turn_id, transcript_path — its rollout
JSONL under `$CODEX_HOME/sessions` —, cwd, hook_event_name, prompt / tool_* / last_assistant_message)
and reads `hookSpecificOutput.additionalContext` of SessionStart, UserPromptSubmit and PostToolUse
(each arrives as its own `developer` message).

- SessionStart → session-start (with the rollout's path: the daemon ends the session from it
  once it is idle — Codex has no session-end event).
- UserPromptSubmit → user-prompt-submit.
- PostToolUse → post-tool-use. Codex's payload has no exit status (`tool_response` is the
  output only), so a failure is read from the rollout: the command's `item_completed` entry
  (`exit_code`, `status: failed`) or its `function_call_output` ("Process exited with code N").
- Stop (each turn) → the rollout so far as a checkpoint (the conversation's episodes are stored
  now), plus memory feedback from the turn's last message.
- PreCompact → a pre-compaction checkpoint (the rollout keeps every item; Stop stores them).
"""

from __future__ import annotations

import json
import re

from kenning.hooks.adapters import hookrun
from kenning.hooks.adapters.claude_code import parse_feedback
from kenning.hooks.adapters.hookrun import (
    Context, hook_specific_output, prompt_submit, session_start, string, tool_use,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kenning.hooks.wire import Payload, Request

HARNESS = "codex"
INJECTING = frozenset({"SessionStart", "UserPromptSubmit", "PostToolUse"})
CARRIES = frozenset({"Stop"})
_EXITED = re.compile(r"Process exited with code (-?\d+)")


def exit_status(rollout_tail: str, call_id: str | None) -> tuple[int | None, str | None]:
    """(exit code, output) of tool call `call_id` as the rollout records it; (None, None) if absent."""
    if not call_id:
        return None, None
    for line in reversed(rollout_tail.splitlines()):
        if call_id not in line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        payload = entry.get("payload") if isinstance(entry, dict) else None
        if not isinstance(payload, dict):
            continue
        given = payload.get("item")
        item = given if isinstance(given, dict) else {}
        if payload.get("type") == "item_completed" and item.get("id") == call_id and isinstance(item.get("exit_code"), int):
            return item["exit_code"], item.get("aggregated_output") if isinstance(item.get("aggregated_output"), str) else None
        if payload.get("type") == "function_call_output" and payload.get("call_id") == call_id:
            output = payload.get("output")
            text = output if isinstance(output, str) else json.dumps(output)
            match = _EXITED.search(text)
            return (int(match.group(1)) if match else None), text
    return None, None


def requests(event: str, payload: Payload, ctx: Context) -> list[Request]:
    key = string(payload, "session_id")
    if not key or not key.strip():
        return []
    transcript_path = string(payload, "transcript_path")
    if event == "SessionStart":
        return [session_start(key, HARNESS, payload)]
    if event == "UserPromptSubmit":
        return prompt_submit(key, string(payload, "prompt"))
    if event == "PostToolUse":
        call_id = string(payload, "tool_use_id")
        code, recorded = exit_status(ctx.tail(transcript_path, 128 * 1024), call_id)
        response = payload.get("tool_response")
        output = response if isinstance(response, str) else json.dumps(response, default=str) if response else ""
        tool_input = payload.get("tool_input")
        args = tool_input if isinstance(tool_input, dict) else None
        error = f"exit code {code}: {(recorded or output)[-2000:]}" if code else None
        return [tool_use(key, HARNESS, string(payload, "tool_name"), args, output, cwd=string(payload, "cwd"),
                         call_id=call_id, exit_code=code, error=error)]
    if event == "Stop":
        found: list[Request] = [("/api/hooks/pre-compaction", {
            "session_key": key, "trigger": "turn-end", "transcript": ctx.whole(transcript_path)})]
        scores = parse_feedback(string(payload, "last_assistant_message"))
        if scores:
            found.append(("/api/hooks/feedback", {"session_key": key, "memory_feedback": scores}))
        return found
    if event == "PreCompact":  # a checkpoint: the rollout keeps every item through a compaction, and
        # its exchanges are stored whole at the turn's Stop
        return [("/api/hooks/pre-compaction", {"session_key": key, "trigger": string(payload, "trigger") or "compact"})]
    return []


render = hook_specific_output(INJECTING)


def main(argv: list[str]) -> int:
    return hookrun.main(HARNESS, argv, requests, render, CARRIES)
