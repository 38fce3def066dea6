"""A session start's `source` (startup | resume | clear | compact, as the harness says) reaches the session
(issue 34: it was carried on the event and dropped at SessionManager.session_start): the session's metadata
keeps how it began, its latest start's source and how many starts it had; GET /api/sessions/{key} shows it.
A resumed or compacted session that starts again under its key is answered the injection it had."""

from __future__ import annotations

import json
import uuid

from kenning.core.types import MemoryDraft
from kenning.core.events import Harness, PromptSubmitted, SessionStarted
from kenning.hooks.claude_code import handle


def test_each_start_of_a_session_records_its_source(kenning):
    key = f"src-{uuid.uuid4().hex[:8]}"
    kenning.remember_many([MemoryDraft(content="Deploys go through the release train on tuesdays", importance=0.9,
                                        project="srcproj", type="decision", applies="project")])
    first = kenning.hooks.handle(SessionStarted(session_key=key, harness=Harness.CLAUDE_CODE, project="srcproj",
                                                cwd="/w/srcproj"))
    assert first["created"] is True and kenning.sessions.detail(key)["session"]["metadata"] == {
        "source": "startup", "last_source": "startup", "starts": 1}
    again = kenning.hooks.handle(SessionStarted(session_key=key, harness=Harness.CLAUDE_CODE, project="srcproj",
                                                cwd="/w/srcproj", source="compact"))
    assert first["memory_ids"] and again["created"] is False and again["memory_ids"] == first["memory_ids"]  # the same injection
    assert kenning.sessions.detail(key)["session"]["metadata"] == {"source": "startup", "last_source": "compact",
                                                                   "starts": 2}
    prompted = f"{key}-prompt-first"  # Copilot CLI: the prompt may make the session's row before its start
    kenning.hooks.handle(PromptSubmitted(session_key=prompted, prompt="what is the deploy day?"))
    assert kenning.sessions.detail(prompted)["session"]["metadata"] == {}
    kenning.hooks.handle(SessionStarted(session_key=prompted, harness=Harness.COPILOT, source="resume"))
    assert kenning.sessions.detail(prompted)["session"]["metadata"] == {"source": "resume", "last_source": "resume",
                                                                        "starts": 1}


def test_the_hook_s_source_shows_in_the_session_api(daemon, tmp_path):
    key = f"src-http-{uuid.uuid4().hex[:8]}"
    env = {"KENNING_URL": daemon.base_url, "KENNING_HOME": str(daemon.home), "HOME": str(tmp_path)}
    payload = {"session_id": key, "cwd": str(tmp_path), "hook_event_name": "SessionStart", "source": "clear",
               "transcript_path": str(tmp_path / "t.jsonl")}
    handle("session-start", json.dumps(payload), env)
    with daemon.client() as c:
        assert c.get(f"/api/sessions/{key}").json()["session"]["metadata"]["source"] == "clear"
        r = c.post("/api/hooks/event", json={"kind": "session_started", "session_key": key, "source": "resume"})
        assert r.status_code == 200, r.text
        session = c.get(f"/api/sessions/{key}").json()["session"]
    assert session["metadata"] == {"source": "clear", "last_source": "resume", "starts": 2}
