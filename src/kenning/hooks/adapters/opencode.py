"""OpenCode events (`kenning hook opencode <event>`, run by the plugin `kenning connect opencode`
writes; see hooks/connectors/opencode_plugin.js for what it sends).

- session.created → session-start (the plugin calls it before the session's first prompt).
- chat.message → user-prompt-submit (`prompt`: the user's text parts, synthetic parts left out).
- tool.execute.after → post-tool-use; a failure is `metadata.exit` non-zero (bash) or an
  `error` in the metadata.
- session.compacted → pre-compaction.
- session.idle → session-end; `messages` is OpenCode's own message list for the session
  (`client.session.messages`), sent on as the transcript, one `{"info", "parts"}` per line
  (read by kenning.sessions.harness_transcripts).

What the plugin prints back: `{"additionalContext": text}`; it adds it to the system prompt.
"""

from __future__ import annotations

import json

from kenning.hooks.adapters import hookrun
from kenning.hooks.adapters.hookrun import (
    Context, inject_of, neutral_tool, prompt_submit, session_start, string, tool_use,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kenning.hooks.wire import Answer, OpenCodeOutput, Payload, Request

HARNESS = "opencode"
INJECTING = {"session.created", "chat.message", "tool.execute.after"}
CARRIES = frozenset({"session.idle"})
# OpenCode's tool names → the names kenning's observer reads (Claude Code's); camelCase arguments renamed
TOOLS = {"bash": "Bash", "read": "Read", "write": "Write", "edit": "Edit", "multiedit": "MultiEdit",
         "patch": "Edit", "grep": "Grep", "glob": "Glob", "list": "LS", "webfetch": "WebFetch",
         "todowrite": "TodoWrite", "todoread": "TodoRead", "task": "Task"}
ARGS = {"filePath": "file_path", "oldString": "old_string", "newString": "new_string", "replaceAll": "replace_all"}



def unquoted(prompt: str | None) -> str | None:
    """The prompt without the double quotes `opencode run "…"` wraps around a message of several words
    (OpenCode 1.18.33 sends `"How do we apply infrastructure changes?"`, quotes included; issue 35). A
    prompt with quotes inside it is left as typed."""
    if prompt and len(prompt) > 1 and prompt[0] == prompt[-1] == '"' and prompt.count('"') == 2:
        return prompt[1:-1]
    return prompt


def messages_as_jsonl(messages: object) -> str | None:
    """OpenCode's messages, one `{"info", "parts"}` object per line (None when there are none)."""
    if not isinstance(messages, list):
        return None
    rows = [json.dumps({"info": m.get("info"), "parts": m.get("parts")}, ensure_ascii=False, default=str)
            for m in messages if isinstance(m, dict) and isinstance(m.get("info"), dict)]
    return "\n".join(rows) + "\n" if rows else None


def requests(event: str, payload: Payload, ctx: Context) -> list[Request]:
    key = string(payload, "session_id")
    if not key or not key.strip():
        return []
    if event == "session.created":
        return [session_start(key, HARNESS, payload, source="startup")]
    if event == "chat.message":
        return prompt_submit(key, unquoted(string(payload, "prompt")))
    if event == "tool.execute.after":
        given = payload.get("metadata")
        metadata = given if isinstance(given, dict) else {}
        output = payload.get("output")
        text = output if isinstance(output, str) else json.dumps(output, default=str) if output else ""
        exit_code = metadata.get("exit") if isinstance(metadata.get("exit"), int) else None
        name, args = neutral_tool(TOOLS, ARGS, string(payload, "tool"), payload.get("args"))
        error = str(metadata["error"]) if metadata.get("error") else None
        return [tool_use(key, HARNESS, name, args, text, cwd=string(payload, "cwd"), call_id=string(payload, "call_id"),
                         exit_code=exit_code, error=error)]
    if event == "session.compacted":
        return [("/api/hooks/pre-compaction", {"session_key": key, "trigger": "compact"})]
    if event == "session.idle":
        return [("/api/hooks/session-end", {
            "session_key": key, "transcript": messages_as_jsonl(payload.get("messages")),
            "reason": string(payload, "reason") or "idle"})]
    return []


def render(event: str, answer: Answer) -> str:
    inject = inject_of(answer)
    if event not in INJECTING or not inject:
        return ""
    out: OpenCodeOutput = {"additionalContext": inject}
    return json.dumps(out)


def main(argv: list[str]) -> int:
    return hookrun.main(HARNESS, argv, requests, render, CARRIES)
