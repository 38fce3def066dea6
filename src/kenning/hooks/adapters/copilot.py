"""GitHub Copilot CLI hooks (`kenning hook copilot <event>`, installed by `kenning connect copilot`).

Copilot CLI 1.0.102 runs each command hook of `~/.copilot/settings.json` with the event's JSON on
stdin, in camelCase: sessionId, timestamp (ms), cwd, and per event `source` / `initialPrompt`
(sessionStart), `prompt` (userPromptSubmitted), toolName / toolArgs / toolResult {resultType,
textResultForLlm} (postToolUse), toolName / toolArgs / `error` (postToolUseFailure: a tool whose
result is a failure, e.g. `view` of a missing file), errorContext / error (errorOccurred),
`transcriptPath` (agentStop, each turn), `reason` (sessionEnd). It reads `{"additionalContext"}`
printed by sessionStart (its own `user` message in the model request) and userPromptSubmitted
(appended to the user's turn inside `<system_reminder>`).

    sessionStart         → session-start      (with the session's events.jsonl path)
    userPromptSubmitted  → user-prompt-submit (with harness, project and cwd: Copilot CLI runs it at once
                                               with sessionStart, and it often reaches the daemon first)
    postToolUse          → post-tool-use      (a shell command's non-zero exit, which Copilot CLI
                                               reports as a success "completed with exit code N",
                                               is a failed tool here)
    postToolUseFailure   → post-tool-use      (failed, with its `error`)
    errorOccurred        → post-tool-use      (failed) when its errorContext is tool_execution;
                                               model-call and system errors are not tool results
    agentStop            → feedback           (`<memory-feedback>` of the turn's last message, once the
                                               file holds this hook's own record; else at session end)
    preCompact           → pre-compaction
    sessionEnd           → session-end        (events.jsonl as it is now, read through the confined
                                               reader; kenning.sessions.harness_transcripts reads it)

Copilot CLI keeps every session's events in `$COPILOT_HOME/session-state/<sessionId>/events.jsonl`
(`~/.copilot` by default); only agentStop names that path, so the other events derive it. It writes
that file late (1.0.102): at sessionEnd it may hold only the session's first few KB, the rest follows
once the hook has returned, `session.shutdown` last. Session start names the file, so the user's own
daemon reads it again once finished, before the session's summary (sessions.late_transcript); what
sessionEnd sends serves a daemon elsewhere and the spool.
"""

from __future__ import annotations

import json
import os
import re

from kenning.hooks.adapters import hookrun
from kenning.hooks.adapters.claude_code import parse_feedback
from kenning.hooks.adapters.hookrun import (
    Context, inject_of, neutral_tool, project_of, prompt_submit, session_start, string, tool_use,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kenning.hooks.wire import Answer, CopilotOutput, Payload, Request

HARNESS = "copilot"
INJECTING = frozenset({"sessionStart", "userPromptSubmitted"})
CARRIES = frozenset({"sessionEnd"})
FAILED_RESULTS = frozenset({"failure", "denied", "rejected"})
SOURCES = {"new": "startup", "resume": "resume"}
_EXIT = re.compile(r"completed with exit code (-?\d+)>")
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
# Copilot CLI's tool names → the names kenning's observer reads (Claude Code's); arguments renamed alike
TOOLS = {"bash": "Bash", "view": "Read", "create": "Write", "edit": "Edit", "grep": "Grep", "glob": "Glob",
         "web_fetch": "WebFetch", "fetch": "WebFetch", "task": "Task"}
ARGS = {"old_str": "old_string", "new_str": "new_string", "file_text": "content"}
FILE_TOOLS = frozenset({"Read", "Write", "Edit"})  # their `path` is Claude Code's `file_path`


def copilot_home(environ: dict[str, str] | None = None) -> str:
    """Copilot CLI's config and state folder: $COPILOT_HOME, else ~/.copilot."""
    env = os.environ if environ is None else environ
    return env.get("COPILOT_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".copilot")


def events_path(payload: Payload, environ: dict[str, str] | None = None) -> str | None:
    """The session's events.jsonl: the payload's `transcriptPath`, else derived from its sessionId."""
    given = string(payload, "transcriptPath")
    if given:
        return given
    key = string(payload, "sessionId")
    if not key or not _SESSION_ID.match(key):
        return None
    return os.path.join(copilot_home(environ), "session-state", key, "events.jsonl")


def _tool(payload: Payload) -> tuple[str | None, dict[str, object] | None]:
    name, args = neutral_tool(TOOLS, ARGS, string(payload, "toolName"), payload.get("toolArgs"))
    if args is not None and name in FILE_TOOLS and "path" in args:
        args = {("file_path" if k == "path" else k): v for k, v in args.items()}
    return name, args


def tool_outcome(result: object) -> tuple[str, int | None, str | None]:
    """(output, exit code, error) of postToolUse's `toolResult`."""
    if not isinstance(result, dict):
        return (str(result) if result else ""), None, None
    text = result.get("textResultForLlm")
    output = text if isinstance(text, str) else json.dumps(text, default=str) if text else ""
    match = _EXIT.search(output)
    code = int(match.group(1)) if match else None
    kind = result.get("resultType")
    error = result.get("error")
    if kind in FAILED_RESULTS:
        return output, code, str(error or output or kind)
    return output, code, None


def turn_answer(tail: str, at: object) -> str:
    """The content of the last `assistant.message` before this agentStop's own `hook.start` record in an
    events.jsonl tail (its input's `timestamp` is the payload's: the agent rates its memories in a
    `<memory-feedback>` block there); '' when the file does not hold that record yet. Copilot CLI writes
    the file late: an earlier answer must not be rated again; the session's summary takes a rating
    missed here from the finished file (sessions.late_transcript)."""
    answer = ""
    for line in tail.splitlines():
        if '"assistant.message"' not in line and '"agentStop"' not in line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        data = entry.get("data") if isinstance(entry, dict) else None
        if not isinstance(data, dict):
            continue
        if entry.get("type") == "assistant.message" and not data.get("parentToolCallId"):
            content = data.get("content")
            answer = content if isinstance(content, str) and content.strip() else answer
        elif entry.get("type") == "hook.start" and data.get("hookType") == "agentStop":
            given = data.get("input")
            if isinstance(given, dict) and at is not None and given.get("timestamp") == at:
                return answer
    return ""


def requests(event: str, payload: Payload, ctx: Context) -> list[Request]:
    key = string(payload, "sessionId")
    if not key or not key.strip():
        return []
    cwd = string(payload, "cwd")
    if event == "sessionStart":
        source = string(payload, "source") or "new"
        located = {**payload, "transcript_path": events_path(payload, ctx.environ)}
        return [session_start(key, HARNESS, located, source=SOURCES.get(source, source))]
    if event == "userPromptSubmitted":  # it runs at once with sessionStart and often reaches the daemon first:
        # it says which project the session is in (the row it makes, the first prompt's recall)
        return prompt_submit(key, string(payload, "prompt"), harness=HARNESS, project=project_of(cwd), cwd=cwd)
    if event == "postToolUse":
        output, code, error = tool_outcome(payload.get("toolResult"))
        name, args = _tool(payload)
        return [tool_use(key, HARNESS, name, args, output, cwd=cwd, exit_code=code, error=error)]
    if event == "postToolUseFailure":
        name, args = _tool(payload)
        error = string(payload, "error") or "tool failed"
        return [tool_use(key, HARNESS, name, args, error, cwd=cwd, error=error)]
    if event == "errorOccurred":
        if string(payload, "errorContext") != "tool_execution":
            return []  # a model call or the system failed: no tool result
        given = payload.get("error")
        message = given.get("message") if isinstance(given, dict) else given
        text = str(message or "tool execution failed")
        return [tool_use(key, HARNESS, string(payload, "toolName") or "tool", None, text, cwd=cwd, error=text)]
    if event == "agentStop":
        answer = turn_answer(ctx.tail(events_path(payload, ctx.environ), 256 * 1024), payload.get("timestamp"))
        scores = parse_feedback(answer)
        return [("/api/hooks/feedback", {"session_key": key, "memory_feedback": scores})] if scores else []
    if event == "preCompact":  # a checkpoint: events.jsonl keeps the whole session; session end reads it
        return [("/api/hooks/pre-compaction", {"session_key": key, "trigger": string(payload, "trigger") or "compact"})]
    if event == "sessionEnd":
        return [("/api/hooks/session-end", {
            "session_key": key, "transcript": ctx.whole(events_path(payload, ctx.environ)),
            "reason": string(payload, "reason")})]
    return []


def render(event: str, answer: Answer) -> str:
    inject = inject_of(answer)
    if event not in INJECTING or not inject:
        return ""
    out: CopilotOutput = {"additionalContext": inject}
    return json.dumps(out)


def main(argv: list[str]) -> int:
    return hookrun.main(HARNESS, argv, requests, render, CARRIES)
