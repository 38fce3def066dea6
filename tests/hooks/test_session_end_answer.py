"""The session-end answer and /event's answer, declared once (issue 34): what a real daemon writes on the wire.

The route serialises hookservice.SessionEndAnswer (sessions.end.EndAnswer and the observer's promotion); its
`summary` and `observer` go out as the service built them. Checked against what the daemon stored: the summary is
the summary job's result after its key and status, key for key and in its order at every depth (validated against
the TypedDicts, pydantic would write the continuity judge's `judge` before its `reasoning`, and drop keys no
TypedDict declares).
"""

from __future__ import annotations

import json
import uuid

TRANSCRIPT = "\n".join(json.dumps(entry) for entry in [
    {"type": "user", "timestamp": "2026-02-01T09:00:00Z", "message": {"role": "user", "content":
        "Fix the failing migration test in db/migrate.py. We always run make migrate before the tests."}},
    {"type": "assistant", "timestamp": "2026-02-01T09:05:00Z", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "up() returned nothing; it returns 1 now and the test passes."}]}},
])
STEPS = [
    ("Read", {"file_path": "db/migrate.py"}, {"content": "def up(): pass"}),
    ("Bash", {"command": "pytest tests/test_migrate.py"}, {"stdout": "FAILED tests/test_migrate.py::test_up",
                                                            "stderr": "", "exit_code": 1}),
    ("Edit", {"file_path": "db/migrate.py", "old_string": "pass", "new_string": "return 1"}, {"filePath": "x"}),
]
PROMOTION_KEYS = ["project", "session_type", "ab_group", "steps", "tool_calls", "file_rereads", "step_injections",
                  "signals", "promoted", "reinforced", "session_key", "candidates", "synthesis"]


def _ordered(value: object) -> str:
    """`value` as JSON with its keys in the order they came (a reordered dict reads differently)."""
    return json.dumps(value, ensure_ascii=False)


def _session(c, key: str, project: str, cwd: str) -> None:
    assert c.post("/api/hooks/session-start", json={"session_key": key, "harness": "claude-code",
                                                    "project": project, "cwd": cwd}).status_code == 200
    for index, (tool, tool_input, response) in enumerate(STEPS):
        step = c.post("/api/hooks/post-tool-use", json={
            "session_key": key, "harness": "claude-code", "tool_name": tool, "tool_input": tool_input,
            "tool_response": response, "cwd": cwd, "tool_use_id": f"t{index}"})
        assert step.status_code == 200, step.text


def test_a_waited_session_end_answers_the_stored_summary_and_the_promotion_key_for_key(daemon, tmp_path):
    key = f"end-answer-{uuid.uuid4().hex[:8]}"
    with daemon.client(timeout=120) as c:
        _session(c, key, "end-answer", str(tmp_path))
        end = c.post("/api/hooks/session-end", json={"session_key": key, "transcript": TRANSCRIPT, "wait": True,
                                                      "timestamp": "2026-02-01T09:06:00Z"})
        job = c.get(f"/api/sessions/{key}").json()["summary_job"]
    assert end.status_code == 200, end.text
    answer = json.loads(end.text)
    assert list(answer) == ["queued", "job_id", "summary", "observer"]
    assert answer["queued"] is False and answer["job_id"] == job["id"] and job["status"] == "done"
    summary = answer["summary"]
    assert _ordered(summary) == _ordered({"session_key": key, "status": "done", **job["result"]})
    assert list(summary)[:2] == ["session_key", "status"] and summary["extraction"]["stored"]
    assert list(summary["score"])[-2:] == ["reasoning", "judge"]  # as the judge wrote them
    assert list(answer["observer"]) == PROMOTION_KEYS  # the promotion as the observer answered it, nulls kept
    assert answer["observer"]["session_key"] == key and answer["observer"]["steps"] == len(STEPS)
    assert answer["observer"]["synthesis"] is None
    # the wire form: compact JSON of that answer, byte for byte
    assert end.content == json.dumps(answer, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def test_a_session_end_that_does_not_wait_answers_the_job_and_the_observer_only(daemon):
    key = f"end-nowait-{uuid.uuid4().hex[:8]}"
    with daemon.client() as c:
        end = c.post("/api/hooks/session-end", json={"session_key": key})
        job = c.get(f"/api/sessions/{key}").json()["summary_job"]
    assert end.status_code == 200, end.text
    assert end.json() == {"queued": True, "job_id": job["id"],
                          "observer": {"queued": False, "promoted": [], "reason": "no observed events"}}
    assert list(end.json()) == ["queued", "job_id", "observer"]


def test_the_event_route_answers_each_kind_with_every_key_of_its_own_answer(daemon, tmp_path):
    """/event's answer is the union of the routes' answers: each goes out with all its keys (a tool step keeps
    `step`, a compaction its `episodes`, a session end its summary and promotion as stored)."""
    key = f"event-answer-{uuid.uuid4().hex[:8]}"
    base = {"session_key": key, "harness": "codex", "cwd": str(tmp_path)}
    with daemon.client(timeout=120) as c:
        start = c.post("/api/hooks/event", json={**base, "kind": "session_started", "project": "event-answer"})
        tool = c.post("/api/hooks/event", json={**base, "kind": "tool_result", "tool_name": "Bash",
                                                "tool_input": {"command": "make test"}, "output": "Error: boom",
                                                "success": False, "error": "boom"})
        turn = c.post("/api/hooks/event", json={**base, "kind": "turn_ended", "last_assistant_message": "done"})
        compacted = c.post("/api/hooks/event", json={**base, "kind": "compacted", "transcript": TRANSCRIPT})
        end = c.post("/api/hooks/event", json={**base, "kind": "session_ended", "wait": True, "turns": [
            {"role": "user", "text": "We deploy with scripts/ship.sh only."}, {"role": "assistant", "text": "Noted."}]})
        job = c.get(f"/api/sessions/{key}").json()["summary_job"]
    for response in (start, tool, turn, compacted, end):
        assert response.status_code == 200, response.text
    assert list(start.json()) == ["inject", "memory_ids", "candidates", "status_line", "created", "cut",
                                  "predictor_used"]  # continuity: null left out on this route (exclude_none)
    assert list(tool.json())[:3] == ["inject", "memory_ids", "step"] and tool.json()["step"] == 1
    assert turn.json() == {"applied": 0, "ignored": 0}
    assert list(compacted.json()) == ["checkpoint_id", "episodes"] and compacted.json()["episodes"]["stored"] >= 1
    answer = json.loads(end.text)
    assert list(answer) == ["queued", "job_id", "summary", "observer"]
    assert _ordered(answer["summary"]) == _ordered({"session_key": key, "status": "done", **job["result"]})
