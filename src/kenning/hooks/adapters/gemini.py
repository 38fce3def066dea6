"""Gemini CLI hooks (`kenning hook gemini <Event>`, installed by `kenning connect gemini`).

Gemini CLI 0.61 sends session_id, transcript_path (its chats JSONL under `~/.gemini/tmp`), cwd,
hook_event_name and per event: `source` (SessionStart), `prompt` (BeforeAgent — with the
SessionStart context prepended as `<hook_context>…</hook_context>`, which is cut off here),
tool_name / tool_input / tool_response {llmContent, returnDisplay, error?} (AfterTool),
`prompt_response` (AfterAgent), `trigger` (PreCompress), `reason` (SessionEnd). It reads
`hookSpecificOutput.additionalContext`: SessionStart's is prepended to the user turn,
BeforeAgent's is an extra part of it, AfterTool's is appended to the tool's response.

A shell command that exits non-zero is not an error to Gemini CLI (its llmContent says
`Exit Code: N`); it is a failed tool here, like a tool response with an `error`.
"""

from __future__ import annotations

import json
import re

from kenning.hooks.adapters import hookrun
from kenning.hooks.adapters.claude_code import parse_feedback
from kenning.hooks.adapters.hookrun import (
    Context, hook_specific_output, neutral_tool, prompt_submit, session_start, string, tool_use,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kenning.hooks.wire import Answer, Payload, Request

HARNESS = "gemini"
INJECTING = frozenset({"SessionStart", "BeforeAgent", "AfterTool"})
CARRIES = frozenset({"SessionEnd"})
_WRAPPER = re.compile(r"</?untrusted_context>")
_EXIT_CODE = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
# Gemini CLI's tool names → the names kenning's observer reads (Claude Code's); arguments renamed alike
TOOLS = {"run_shell_command": "Bash", "read_file": "Read", "read_many_files": "Read", "write_file": "Write",
         "replace": "Edit", "glob": "Glob", "search_file_content": "Grep", "grep_search": "Grep", "grep": "Grep",
         "list_directory": "LS", "web_fetch": "WebFetch", "google_web_search": "WebSearch"}
ARGS = {"absolute_path": "file_path", "path": "path", "dir_path": "path"}



def tool_outcome(response: object) -> tuple[str, str | None]:
    """(the tool's output, its error or None) from Gemini CLI's `tool_response`."""
    if not isinstance(response, dict):
        return (str(response) if response else ""), None
    content = response.get("llmContent")
    output = content if isinstance(content, str) else json.dumps(content, default=str) if content else ""
    output = _WRAPPER.sub("", output).strip()  # Gemini CLI marks tool output as untrusted; so does kenning
    error = response.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        return output, str(message or "tool error")
    match = _EXIT_CODE.search(output)
    if match and int(match.group(1)) != 0:
        return output, f"exit code {match.group(1)}: {output[-2000:]}"
    return output, None


def requests(event: str, payload: Payload, ctx: Context) -> list[Request]:
    key = string(payload, "session_id")
    if not key or not key.strip():
        return []
    if event == "SessionStart":
        return [session_start(key, HARNESS, payload)]
    if event == "BeforeAgent":  # the prompt, with SessionStart's <hook_context> in front: cut off
        return prompt_submit(key, string(payload, "prompt"))
    if event == "AfterTool":
        output, error = tool_outcome(payload.get("tool_response"))
        name, args = neutral_tool(TOOLS, ARGS, string(payload, "tool_name"), payload.get("tool_input"))
        return [tool_use(key, HARNESS, name, args, output, cwd=string(payload, "cwd"), error=error)]
    if event == "AfterAgent":
        scores = parse_feedback(string(payload, "prompt_response"))
        return [("/api/hooks/feedback", {"session_key": key, "memory_feedback": scores})] if scores else []
    if event == "PreCompress":  # a checkpoint only: Gemini CLI asks before most model calls, mid-exchange,
        # and its chats file keeps every message through a compression (session end reads them all)
        return [("/api/hooks/pre-compaction", {"session_key": key, "trigger": string(payload, "trigger") or "compact"})]
    if event == "SessionEnd":
        return [("/api/hooks/session-end", {
            "session_key": key, "transcript": ctx.whole(string(payload, "transcript_path")), "reason": string(payload, "reason")})]
    return []


_render = hook_specific_output(INJECTING)


def render(event: str, answer: Answer) -> str:
    """`hookSpecificOutput.additionalContext` of the events that take one; at SessionStart with no daemon,
    hookrun's notice as `systemMessage`, which Gemini CLI writes to the user's terminal (stderr), never to
    the model (issue 35)."""
    notice = answer.get("notice") if isinstance(answer, dict) else None
    if isinstance(notice, str) and event == "SessionStart":
        return json.dumps({"systemMessage": notice})
    return _render(event, answer)


def main(argv: list[str]) -> int:
    return hookrun.main(HARNESS, argv, requests, render, CARRIES)
