"""The Codex, Gemini CLI, OpenCode and Copilot CLI transcript readers (sessions/harness_transcripts.py) through
sessions.transcript.read_transcript: typed text, assistant text and tool calls/results are kept;
harness text (instructions, hook contexts — kenning's own blocks —, session context, synthetic
parts) never becomes a turn; entry types the reader does not know are skipped and counted.
(Their formats as the real CLIs write them are exercised in tests/harness/test_*.py.)"""

from __future__ import annotations

import json

from kenning.sessions.transcript import read_transcript

MEMORIES = "<kenning-memories>\n- [abc] Deploy with scripts/ship.sh\n</kenning-memories>"


def jsonl(*entries: dict) -> str:
    return "".join(json.dumps(e) + "\n" for e in entries)


def texts(reading) -> list[tuple[str, str]]:
    return [(t.role, t.text) for t in reading.turns]


def test_codex_rollout():
    def item(payload: dict) -> dict:
        return {"timestamp": "2026-11-26T10:00:00.000Z", "type": "response_item", "payload": payload}

    user_meta = {"content_item_metadata": [{"provenance": {"type": "user"}}]}
    harness_meta = {"content_item_metadata": [{"provenance": {"type": "harness"}}]}
    reading = read_transcript(jsonl(
        {"timestamp": "2026-11-26T10:00:00.000Z", "type": "session_meta", "payload": {"id": "s1", "cwd": "/w"}},
        item({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": MEMORIES}]}),
        item({"type": "message", "role": "user", "internal_chat_message_metadata_passthrough": harness_meta,
              "content": [{"type": "input_text", "text": "<environment_context><cwd>/w</cwd></environment_context>"}]}),
        item({"type": "message", "role": "user", "internal_chat_message_metadata_passthrough": user_meta,
              "content": [{"type": "input_text", "text": "Run the tests"}]}),
        item({"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "make test"}', "call_id": "c1"}),
        item({"type": "function_call_output", "call_id": "c1",
              "output": "Process exited with code 2\nOutput:\nmake: *** [test] Error 1"}),
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "The tests fail."}]}),
        {"timestamp": "2026-11-26T10:00:01.000Z", "type": "some_future_entry", "payload": {}},
        item({"type": "future_item_type"}),
    ))
    assert reading.format == "codex-rollout"
    assert texts(reading) == [("user", "Run the tests"), ("tool", 'exec_command: {"cmd": "make test"}'),
                              ("tool", "Process exited with code 2\nOutput:\nmake: *** [test] Error 1"),
                              ("assistant", "The tests fail.")]
    assert [(r.tool_name, r.success) for r in reading.tool_results] == [("exec_command", False)]
    assert reading.unknown == {"codex:some_future_entry": 1, "codex:response_item:future_item_type": 1}
    assert reading.skipped["developer-message"] == 1 and reading.skipped["user-harness-text"] == 1


def test_gemini_chats():
    reading = read_transcript(jsonl(
        {"sessionId": "s2", "projectHash": "h", "startTime": "2026-11-26T10:00:00.000Z", "kind": "main"},
        {"$set": {"messages": [{"type": "user", "content": [{"text": "<session_context>This is the Gemini CLI."
                                                                   "</session_context>"}]}]}},
        {"id": "u1", "timestamp": "2026-11-26T10:00:01.000Z", "type": "user",
         "content": [{"text": f"<hook_context>{MEMORIES}</hook_context>\n\nWhy does CI fail?"}]},
        {"id": "g1", "timestamp": "2026-11-26T10:00:02.000Z", "type": "gemini", "content": ""},
        {"id": "g1", "timestamp": "2026-11-26T10:00:02.000Z", "type": "gemini", "content": "",
         "toolCalls": [{"id": "t1", "name": "run_shell_command", "args": {"command": "make ci"}, "status": "success",
                        "result": [{"functionResponse": {"id": "t1", "name": "run_shell_command", "response": {
                            "output": "<untrusted_context>\nOutput: boom\nExit Code: 1\n</untrusted_context>"}}}]}]},
        {"id": "u2", "type": "user", "content": [{"functionResponse": {"id": "t1", "response": {"output": "x"}}}]},
        {"id": "g2", "timestamp": "2026-11-26T10:00:03.000Z", "type": "gemini", "content": "The lint step fails."},
        {"id": "i1", "type": "info", "content": "Request cancelled."},
        {"id": "x1", "type": "mystery", "content": "?"},
    ))
    assert reading.format == "gemini-chats"
    assert texts(reading)[0] == ("user", "Why does CI fail?")
    assert texts(reading)[-1] == ("assistant", "The lint step fails.")
    assert [(r.tool_name, r.success) for r in reading.tool_results] == [("run_shell_command", False)]
    assert reading.unknown == {"gemini:mystery": 1}
    assert all("Gemini CLI" not in t and "kenning" not in t for _, t in texts(reading))


def test_opencode_messages():
    reading = read_transcript(jsonl(
        {"info": {"role": "user", "time": {"created": 1795704893329}},
         "parts": [{"type": "text", "text": "Fix the build"},
                   {"type": "text", "text": MEMORIES, "synthetic": True}]},
        {"info": {"role": "assistant", "time": {"created": 1795704894329}},
         "parts": [{"type": "step-start"},
                   {"type": "tool", "tool": "bash", "callID": "c1",
                    "state": {"status": "completed", "input": {"command": "make"}, "output": "Error 2",
                              "metadata": {"exit": 2}}},
                   {"type": "text", "text": "The build fails in step 2."},
                   {"type": "hologram"}]},
    ))
    assert reading.format == "opencode-messages"
    assert texts(reading) == [("user", "Fix the build"), ("tool", 'bash: {"command": "make"}'), ("tool", "Error 2"),
                              ("assistant", "The build fails in step 2.")]
    assert reading.turns[0].at == "2026-11-26T14:54:53.329Z"
    assert [(r.tool_name, r.success) for r in reading.tool_results] == [("bash", False)]
    assert reading.skipped["synthetic-text"] == 1 and reading.unknown == {"opencode:part:hologram": 1}


def test_copilot_events():
    def event(kind: str, data: dict) -> dict:
        return {"type": kind, "data": data, "id": kind, "timestamp": "2026-11-28T12:15:19.115Z", "parentId": None}

    reading = read_transcript(jsonl(
        event("session.start", {"sessionId": "s1", "producer": "copilot-agent", "copilotVersion": "1.0.102"}),
        event("hook.end", {"hookType": "sessionStart", "success": True, "output": {"additionalContext": MEMORIES}}),
        event("user.message", {"content": "Run the tests", "transformedContent":
                               f"<current_datetime>x</current_datetime>\n\nRun the tests\n\n"
                               f"<system_reminder>\n{MEMORIES}\n</system_reminder>"}),
        event("user.message", {"content": "Use the pdf skill", "source": "skill-pdf"}),
        event("system.message", {"role": "system", "content": "You are the GitHub Copilot CLI"}),
        event("assistant.message", {"content": "", "toolRequests": [
            {"toolCallId": "c1", "name": "bash", "arguments": {"command": "make test"}},
            {"toolCallId": "c2", "name": "view", "arguments": {"path": "/w/missing.txt"}}]}),
        event("tool.execution_start", {"toolCallId": "c1", "toolName": "bash"}),
        event("tool.execution_complete", {"toolCallId": "c1", "success": True, "shellExecution": {"exitCode": 2},
                                          "result": {"content": "Error 1\n<shellId: 0 completed with exit code 2>"}}),
        event("tool.execution_complete", {"toolCallId": "c2", "success": False,
                                          "error": {"message": "Path does not exist"}}),
        event("assistant.message", {"content": "The tests fail.", "toolRequests": []}),
        event("assistant.message", {"content": "subagent words", "parentToolCallId": "t1"}),
        event("hologram", {}),
    ))
    assert reading.format == "copilot-events"
    assert texts(reading) == [("user", "Run the tests"), ("tool", 'bash: {"command": "make test"}'),
                              ("tool", 'view: {"path": "/w/missing.txt"}'),
                              ("tool", "Error 1\n<shellId: 0 completed with exit code 2>"),
                              ("tool", "Path does not exist"), ("assistant", "The tests fail.")]
    assert [(r.tool_name, r.success) for r in reading.tool_results] == [("bash", False), ("view", False)]
    assert reading.skipped["user-harness-text"] == 1 and reading.skipped["hook.end"] == 1
    assert reading.skipped["system.message"] == 1 and reading.skipped["subagent-message"] == 1
    assert reading.unknown == {"copilot:hologram": 1}
