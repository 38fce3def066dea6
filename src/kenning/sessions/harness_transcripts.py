"""Transcript readers for Codex CLI (rollout JSONL), Gemini CLI (chats JSONL), OpenCode (the
message list kenning's plugin sends) and GitHub Copilot CLI (its session's events.jsonl), into the
conversation (core.events.Turn) and tool results.

The guarantee of core.events holds: a 'user' turn is only what the user typed, an 'assistant'
turn only the assistant's own text, a 'tool' turn a call or its result (untrusted). Harness text
never becomes a turn: Codex's `developer` messages (its instructions, hook contexts — kenning's
own `<kenning-memories>` / `<memory-feedback>` blocks), its `<environment_context>` and AGENTS.md
`user` messages; Gemini CLI's `<session_context>` and `<hook_context>` parts; OpenCode's
synthetic parts; Copilot CLI's system message, hook records (hook.start / hook.end: the context
kenning's hooks returned), a user message's `transformedContent` (the prompt with the harness's
`<system_reminder>` and date) and user messages it injected itself (`source`: skills, agents,
autopilot continuations). Entry types a reader does not know are skipped and counted (`unknown`), never
guessed at; known bookkeeping is skipped and counted by type (`skipped`).

`read_harness_transcript(entries)` recognises the format from the decoded JSONL entries and
returns None when it is none of these four (sessions.transcript then reads it).
Formats as written by Codex 0.169.0, Gemini CLI 0.61.0, OpenCode 1.18.33 and Copilot CLI 1.0.102.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

from kenning.core.clock import to_iso
from kenning.core.events import Harness, ToolResult, TranscriptReading, Turn, parse_feedback, strip_harness_text

MAX_TOOL_CHARS = 2000
_CODEX_EXIT = re.compile(r"Process exited with code (-?\d+)")
_GEMINI_EXIT = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
# Codex `user` messages that are the harness's: environment, AGENTS.md / user instructions, skills
_CODEX_HARNESS_USER = re.compile(r"^\s*(<environment_context>|<user_instructions>|<skills_instructions>|"
                                 r"<turn_aborted>|<user_shell_command>|# AGENTS\.md instructions)")
_SESSION_CONTEXT = re.compile(r"<session_context>.*?(</session_context>|\Z)", re.DOTALL)

CODEX_BOOKKEEPING = frozenset({"session_meta", "turn_context", "world_state", "token_usage_record", "event_msg",
                               "compacted"})
CODEX_SKIPPED_ITEMS = frozenset({"reasoning", "web_search_call", "ghost_snapshot", "compaction", "image_generation_call"})
GEMINI_HARNESS_TYPES = frozenset({"info", "error", "warning"})
OPENCODE_SKIPPED_PARTS = frozenset({"step-start", "step-finish", "reasoning", "snapshot", "patch", "file", "agent",
                                    "compaction", "subtask", "retry"})


JsonObject = dict[str, object]  # one decoded JSONL entry, or an object inside one: untrusted, read through as_*


def as_object(value: object) -> JsonObject:
    """`value` when it is a JSON object, else {}."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[object]:
    """`value` when it is a JSON array, else []."""
    return value if isinstance(value, list) else []


def as_str(value: object) -> str | None:
    """`value` when it is a string, else None."""
    return value if isinstance(value, str) else None


def _clip(text: str) -> str:
    return text[:MAX_TOOL_CHARS]


def _tool_call_text(name: str, args: object) -> str:
    return f"{name}: {_clip(args if isinstance(args, str) else json.dumps(args, default=str))}"


def _result(reading: TranscriptReading, harness: Harness, name: str, args: object, text: str, failed: bool,
            at: str | None, call_id: str | None) -> None:
    reading.turns.append(Turn("tool", _clip(text), at, tool_name=name, is_error=failed))
    reading.tool_results.append(ToolResult(
        session_key="", harness=harness, timestamp=at, tool_name=name,
        tool_input=args if isinstance(args, dict) else {}, input_summary=_tool_call_text(name, args)[:200],
        output="" if failed else _clip(text), success=not failed, error=_clip(text) if failed else None,
        tool_use_id=call_id,
    ))


def _text(reading: TranscriptReading, role: str, raw: str, at: str | None) -> None:
    text = strip_harness_text(raw).strip()
    if text:
        reading.turns.append(Turn(role, text, at))
    elif raw.strip():
        reading.skip(f"{role}-harness-text")


# -- Codex rollout ---------------------------------------------------------------------------------
def is_codex(entries: list[JsonObject]) -> bool:
    return any(e.get("type") == "session_meta" and isinstance(e.get("payload"), dict) for e in entries[:3]) or (
        all(isinstance(e.get("payload"), dict) and isinstance(e.get("type"), str) for e in entries[:20])
        and any(e.get("type") == "response_item" for e in entries))


def _codex_user_text(payload: JsonObject) -> str:
    """What the user typed in a `user` message: its parts whose provenance is the user (Codex
    0.169 says so per part); without provenance, the parts that are not harness blocks."""
    content = as_list(payload.get("content"))
    meta = payload.get("internal_chat_message_metadata_passthrough")
    provenance = meta.get("content_item_metadata") if isinstance(meta, dict) else None
    texts = []
    for index, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") not in ("input_text", "text"):
            continue
        text = str(part.get("text", ""))
        if isinstance(provenance, list) and index < len(provenance) and isinstance(provenance[index], dict):
            source = (provenance[index].get("provenance") or {}).get("type")
            if source != "user":
                continue
        elif _CODEX_HARNESS_USER.match(text):
            continue
        texts.append(text)
    return "\n".join(texts)


def read_codex(entries: list[JsonObject]) -> TranscriptReading:
    reading = TranscriptReading(format="codex-rollout")
    calls: dict[str, tuple[str, object]] = {}
    for entry in entries:
        kind = entry.get("type")
        payload = as_object(entry.get("payload"))
        at = as_str(entry.get("timestamp"))
        if kind in CODEX_BOOKKEEPING:
            reading.skip(str(kind))
            continue
        if kind != "response_item":
            reading.unknown_type(f"codex:{kind}")
            continue
        item = payload.get("type")
        if item == "message":
            role = payload.get("role")
            if role == "user":
                typed = _codex_user_text(payload)
                if typed.strip():
                    _text(reading, "user", typed, at)
                else:
                    reading.skip("user-harness-text")
            elif role == "assistant":
                parts = as_list(payload.get("content"))
                _text(reading, "assistant", "\n".join(str(p.get("text", "")) for p in parts
                                                      if isinstance(p, dict) and p.get("type") == "output_text"), at)
            else:  # developer / system: instructions and hook contexts
                reading.skip(f"{role}-message")
        elif item in ("function_call", "custom_tool_call", "local_shell_call"):
            name = str(payload.get("name") or item)
            args: object = payload.get("arguments", payload.get("input", payload.get("action")))
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except ValueError:
                    pass
            call_id = as_str(payload.get("call_id"))
            if call_id:
                calls[call_id] = (name, args)
            reading.turns.append(Turn("tool", _tool_call_text(name, args), at, tool_name=name))
        elif item in ("function_call_output", "custom_tool_call_output"):
            call_id = as_str(payload.get("call_id"))
            name, args = calls.get(call_id or "", ("tool", {}))
            output = payload.get("output")
            text = output if isinstance(output, str) else json.dumps(output, default=str)
            code = _CODEX_EXIT.search(text)
            failed = bool(code and int(code.group(1)) != 0) or (isinstance(output, dict) and output.get("success") is False)
            _result(reading, Harness.CODEX, name, args, text, failed, at, call_id)
        elif item in CODEX_SKIPPED_ITEMS:
            reading.skip(str(item))
        else:
            reading.unknown_type(f"codex:response_item:{item}")
    return reading


# -- Gemini CLI chats ------------------------------------------------------------------------------
def is_gemini(entries: list[JsonObject]) -> bool:
    head = entries[0]
    return "projectHash" in head and "sessionId" in head and "type" not in head


def _gemini_parts(content: object) -> list[JsonObject]:
    if isinstance(content, str):
        return [{"text": content}]
    return [p for p in content if isinstance(p, dict)] if isinstance(content, list) else []


def read_gemini(entries: list[JsonObject]) -> TranscriptReading:
    reading = TranscriptReading(format="gemini-chats")
    messages: dict[str, JsonObject] = {}  # a message is written again as it grows (tool calls): keep the last
    for index, entry in enumerate(entries):
        if "$set" in entry or "$unset" in entry:
            reading.skip("metadata")  # session metadata (its first $set carries the <session_context>)
            continue
        if index == 0 and "projectHash" in entry:
            reading.skip("header")
            continue
        key = str(entry.get("id") or f"line-{index}")
        messages[key] = entry
    for entry in messages.values():
        kind = entry.get("type")
        at = as_str(entry.get("timestamp"))
        if kind in GEMINI_HARNESS_TYPES:
            reading.skip(str(kind))
            continue
        parts = _gemini_parts(entry.get("content"))
        if kind == "user":
            texts = [str(p.get("text", "")) for p in parts if "text" in p]
            if any("functionResponse" in p for p in parts):
                reading.skip("function-response")  # the tool's result: read from the model's toolCalls
            if texts:
                _text(reading, "user", _SESSION_CONTEXT.sub("", "\n".join(texts)), at)
        elif kind == "gemini":
            _text(reading, "assistant", "\n".join(str(p.get("text", "")) for p in parts if "text" in p
                                                  and not p.get("thought")), at)
            for call in as_list(entry.get("toolCalls")):
                if isinstance(call, dict):
                    _gemini_tool(reading, call, at)
        else:
            reading.unknown_type(f"gemini:{kind}")
    return reading


def _gemini_tool(reading: TranscriptReading, call: JsonObject, at: str | None) -> None:
    name, args = str(call.get("name") or "tool"), call.get("args")
    stamp = call.get("timestamp")
    when = stamp if isinstance(stamp, str) else at
    reading.turns.append(Turn("tool", _tool_call_text(name, args), when, tool_name=name))
    outputs = []
    for result in as_list(call.get("result")):
        response = (result.get("functionResponse") or {}).get("response") if isinstance(result, dict) else None
        if isinstance(response, dict):
            outputs.append(str(response.get("output", response.get("error", "")) or json.dumps(response, default=str)))
    text = "\n".join(outputs) or str(call.get("resultDisplay") or "")
    code = _GEMINI_EXIT.search(text)
    failed = call.get("status") in ("error", "cancelled") or bool(code and int(code.group(1)) != 0)
    _result(reading, Harness.GEMINI, name, args, text, failed, when, as_str(call.get("id")))


# -- OpenCode messages ------------------------------------------------------------------------------
def is_opencode(entries: list[JsonObject]) -> bool:
    return all(isinstance(e.get("info"), dict) and "parts" in e for e in entries[:5])


def read_opencode(entries: list[JsonObject]) -> TranscriptReading:
    reading = TranscriptReading(format="opencode-messages")
    for entry in entries:
        info = as_object(entry.get("info"))
        role = info.get("role")
        at = _millis_iso(as_object(info.get("time")).get("created"))
        if not isinstance(role, str) or role not in ("user", "assistant"):
            reading.unknown_type(f"opencode:{role}")
            continue
        texts = []
        for item in as_list(entry.get("parts")):
            part = as_object(item)
            kind = part.get("type")  # None: not an object
            if kind == "text":
                if part.get("synthetic") or part.get("ignored"):
                    reading.skip("synthetic-text")
                else:
                    texts.append(str(part.get("text", "")))
            elif kind == "tool":
                _opencode_tool(reading, part, at)
            elif kind in OPENCODE_SKIPPED_PARTS:
                reading.skip(str(kind))
            else:
                reading.unknown_type(f"opencode:part:{kind}")
        if texts:
            _text(reading, role, "\n".join(texts), at)
    return reading


def _opencode_tool(reading: TranscriptReading, part: JsonObject, at: str | None) -> None:
    name = str(part.get("tool") or "tool")
    state = as_object(part.get("state"))
    args = state.get("input")
    reading.turns.append(Turn("tool", _tool_call_text(name, args), at, tool_name=name))
    status = state.get("status")
    if status not in ("completed", "error"):
        reading.skip(f"tool-{status}")
        return
    exit_code = as_object(state.get("metadata")).get("exit")
    text = str(state.get("error") if status == "error" else state.get("output") or "")
    failed = status == "error" or (isinstance(exit_code, int) and exit_code != 0)
    _result(reading, Harness.OPENCODE, name, args, text, failed, at, as_str(part.get("callID")))


# -- GitHub Copilot CLI events.jsonl --------------------------------------------------------------
COPILOT_HARNESS_PREFIXES = ("session.", "hook.", "system.", "assistant.", "tool.", "permission.", "model.",
                            "subagent.", "skill.", "mcp.", "command.", "user_input.", "elicitation.",
                            "external_tool.", "sampling.", "workflow.", "abort", "pending_messages.")


def is_copilot(entries: list[JsonObject]) -> bool:
    head = entries[0]
    data = as_object(head.get("data"))
    return head.get("type") == "session.start" and (data.get("producer") == "copilot-agent" or "copilotVersion" in data)


def read_copilot(entries: list[JsonObject]) -> TranscriptReading:
    reading = TranscriptReading(format="copilot-events")
    calls: dict[str, tuple[str, object]] = {}
    for entry in entries:
        kind = as_str(entry.get("type")) or ""
        data = as_object(entry.get("data"))
        at = as_str(entry.get("timestamp"))
        if kind == "user.message":
            typed = as_str(data.get("content")) or ""
            if data.get("source") or data.get("isAutopilotContinuation"):
                reading.skip("user-harness-text")  # a skill's, an agent's or autopilot's message
            else:
                _text(reading, "user", typed, at)
        elif kind == "assistant.message":
            if data.get("parentToolCallId"):
                reading.skip("subagent-message")
                continue
            _text(reading, "assistant", as_str(data.get("content")) or "", at)
            for item in as_list(data.get("toolRequests")):
                request = as_object(item)
                name, args = str(request.get("name") or "tool"), request.get("arguments")
                call_id = as_str(request.get("toolCallId"))
                if call_id:
                    calls[call_id] = (name, args)
                reading.turns.append(Turn("tool", _tool_call_text(name, args), at, tool_name=name))
        elif kind == "tool.execution_complete":
            _copilot_tool(reading, data, calls, at)
        elif kind.startswith(COPILOT_HARNESS_PREFIXES):
            reading.skip(kind)
        else:
            reading.unknown_type(f"copilot:{kind}")
    return reading


def _copilot_tool(reading: TranscriptReading, data: JsonObject, calls: dict[str, tuple[str, object]],
                  at: str | None) -> None:
    call_id = as_str(data.get("toolCallId"))
    name, args = calls.get(call_id or "", ("tool", {}))
    result, error = as_object(data.get("result")), data.get("error")
    exit_code = as_object(data.get("shellExecution")).get("exitCode")
    if data.get("success") is False or error:
        message = as_object(error).get("message") if isinstance(error, dict) else error
        text = str(message or result.get("content") or "tool failed")
        failed = True
    else:
        content = result.get("content")
        text = content if isinstance(content, str) else json.dumps(content, default=str) if content else ""
        failed = isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0
    _result(reading, Harness.COPILOT, name, args, text, failed, at, call_id)


COPILOT_END = "session.shutdown"  # written when the Copilot CLI process ends, after its sessionEnd hooks


def copilot_finished(entries: list[JsonObject]) -> bool:
    """Has Copilot CLI finished writing this run of the session? Its last entry is `session.shutdown`
    (a resumed session appends `session.resume` … after it, so only the last entry counts)."""
    return bool(entries) and entries[-1].get("type") == COPILOT_END


def copilot_ratings(entries: list[JsonObject]) -> dict[str, float]:
    """The `<memory-feedback>` ratings in the assistant's own messages (a subagent's skipped), the latest
    rating of each memory winning: what each agentStop hook should have sent."""
    ratings: dict[str, float] = {}
    for entry in entries:
        data = as_object(entry.get("data"))
        if entry.get("type") == "assistant.message" and not data.get("parentToolCallId"):
            ratings.update(parse_feedback(as_str(data.get("content"))))
    return ratings


def _millis_iso(value: object) -> str | None:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        return to_iso(datetime.fromtimestamp(value / 1000, tz=timezone.utc))
    except (OverflowError, OSError, ValueError):
        return None


def read_harness_transcript(entries: list[JsonObject]) -> TranscriptReading | None:
    """The reading of Codex / Gemini CLI / OpenCode / Copilot CLI entries; None when they are none of these."""
    if not entries:
        return None
    if is_gemini(entries):
        return read_gemini(entries)
    if is_opencode(entries):
        return read_opencode(entries)
    if is_copilot(entries):
        return read_copilot(entries)
    if is_codex(entries):
        return read_codex(entries)
    return None
