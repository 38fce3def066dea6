"""A transcript its harness finishes writing after the session-end hook (issue 37, sessions.late_transcript).

GitHub Copilot CLI 1.0.102 writes its events.jsonl late: what the sessionEnd hook reads may stop before
the answer. On a real daemon over HTTP, the session start naming the file as Copilot's hook does: the
summary waits while the file is unfinished, takes it once it ends with `session.shutdown` (replacing what
the hook sent, applying a rating no agentStop hook delivered, never one already given), takes it as it is
once the writer is gone, and leaves a file that is not Copilot CLI's events as the hook sent it.
(tests/harness/test_copilot.py proves the same with the real binary.)"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest

from tests.harness.kenning_checks import episodes, remember

QUESTION = "Which worker pool drains the late billing queue?"


def event(kind: str, data: dict) -> str:
    return json.dumps({"type": kind, "data": data, "id": uuid.uuid4().hex, "timestamp": "2026-11-28T15:00:00.000Z",
                       "parentId": None}) + "\n"


def head(key: str) -> str:
    """What Copilot CLI had written when its sessionEnd hook read the file: the start and the question."""
    return (event("session.start", {"sessionId": key, "producer": "copilot-agent", "copilotVersion": "1.0.102"})
            + event("user.message", {"content": QUESTION}))


def answer(feedback: dict[str, float]) -> str:
    return event("assistant.message", {"content": "The late billing queue drains through lpool-3.\n"
                                                  f"<memory-feedback>{json.dumps(feedback)}</memory-feedback>",
                                       "toolRequests": []}) + event("assistant.turn_end", {"turnId": "0"})


@pytest.fixture
def copilot_dir(tmp_path: Path) -> Path:
    root = tmp_path / "copilot" / "session-state"
    root.mkdir(parents=True)
    return root


@pytest.fixture
def late_daemon(daemon_factory, copilot_dir: Path):
    return daemon_factory(f"sessions:\n  transcript_roots:\n    - {copilot_dir}\n")


def start(daemon, copilot_dir: Path, project: str, text: str) -> tuple[str, Path, list[str]]:
    key = str(uuid.uuid4())
    path = copilot_dir / key / "events.jsonl"
    path.parent.mkdir()
    path.write_text(text)
    with daemon.client() as http:
        started = http.post("/api/hooks/session-start", json={
            "session_key": key, "harness": "copilot", "project": project, "cwd": f"/src/{project}",
            "transcript_path": str(path)})
        assert started.status_code == 200, started.text
        assert http.post("/api/hooks/user-prompt-submit", json={"session_key": key, "prompt": QUESTION}).status_code == 200
    return key, path, started.json()["memory_ids"]


def end(daemon, key: str, transcript: str) -> None:
    with daemon.client() as http:
        ended = http.post("/api/hooks/session-end", json={"session_key": key, "transcript": transcript})
        assert ended.status_code == 200, ended.text


def detail(daemon, key: str) -> dict:
    return daemon.get(f"/api/sessions/{key}").json()


def summarized(daemon, key: str, wait_s: float = 60.0) -> dict:
    deadline = time.monotonic() + wait_s
    while (found := detail(daemon, key))["summary_job"]["status"] != "done":
        assert time.monotonic() < deadline, found["summary_job"]
        time.sleep(0.3)
    return found


def test_the_summary_waits_for_copilot_to_finish_the_file_then_reads_it_whole(late_daemon, copilot_dir):
    project = f"late-{uuid.uuid4().hex[:6]}"
    rated = remember(late_daemon, "Deploy the late billing service with scripts/ship.sh", project, applies="project")
    given = remember(late_daemon, "The late billing service logs to /var/log/late-billing", project, applies="project")
    key, path, shown = start(late_daemon, copilot_dir, project, head(str(uuid.uuid4())))
    assert {rated, given} <= set(shown)
    with late_daemon.client() as http:  # an agentStop that did see its turn's answer rated `given` already
        assert http.post("/api/hooks/feedback", json={"session_key": key, "memory_feedback": {given: 0.2}}).status_code == 200
    sent = path.read_text()
    end(late_daemon, key, sent)  # what the hook could read: no answer yet

    time.sleep(4)  # the summary is held while the file is unfinished (and written to just now)
    held = detail(late_daemon, key)
    assert held["session"]["status"] == "ended"
    assert held["summary_job"]["status"] == "pending" and held["summary_job"]["attempts"] == 0
    assert held["summary_job"]["error"] == "the harness is still writing the session's transcript"  # deferred
    assert episodes(late_daemon, key, wait_s=0) == []

    with path.open("a") as f:  # Copilot CLI writes the rest, then session.shutdown as its process ends
        f.write(answer({rated: 0.9, given: 0.9}) + event("hook.start", {"hookType": "sessionEnd"})
                + event("session.shutdown", {"shutdownType": "routine"}))
    done = summarized(late_daemon, key)
    assert done["transcript"]["chars"] == len(path.read_text())  # the finished file replaced the hook's
    assert any(QUESTION in e and "lpool-3" in e for e in episodes(late_daemon, key))
    ratings = {m["memory_id"]: (m["agent_feedback_count"], m["agent_relevance_score"]) for m in done["memories"]}
    assert ratings[rated] == (1, 0.9)  # the rating no hook delivered, from the file
    assert ratings[given] == (1, 0.2)  # the one a hook delivered is not given twice


def test_an_unfinished_file_nobody_writes_to_any_more_is_taken_as_it_is(late_daemon, copilot_dir):
    project = f"late-gone-{uuid.uuid4().hex[:6]}"
    key, path, _ = start(late_daemon, copilot_dir, project, head(str(uuid.uuid4())))
    end(late_daemon, key, path.read_text())
    with path.open("a") as f:  # the rest came, but the process was killed before session.shutdown
        f.write(answer({}))
    old = time.time() - 120
    os.utime(path, (old, old))  # and nothing has written to it for two minutes
    done = summarized(late_daemon, key)
    assert done["transcript"]["chars"] == len(path.read_text())
    assert any("lpool-3" in e for e in episodes(late_daemon, key))


def test_a_file_that_is_not_copilot_events_stays_as_its_hook_sent_it(late_daemon, copilot_dir):
    project = f"late-other-{uuid.uuid4().hex[:6]}"
    other = (json.dumps({"role": "user", "content": QUESTION}) + "\n"
             + json.dumps({"role": "assistant", "content": "It drains through lpool-3."}) + "\n")
    key, path, _ = start(late_daemon, copilot_dir, project, other)
    sent = other + json.dumps({"role": "user", "content": "Thanks, and the retry queue?"}) + "\n"
    end(late_daemon, key, sent)  # a harness whose hook read more than the file now holds (or another file)
    done = summarized(late_daemon, key, wait_s=30)
    assert done["transcript"]["chars"] == len(sent)
