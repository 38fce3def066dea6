"""Sessions become memory (issue 10) against one real daemon: episodes, injection for the task,
decisions and amendments, no self-pollution, provenance."""

from __future__ import annotations

import json
import uuid

import pytest
from tests.conftest import start_daemon

CONFIG = "sessions:\n  latency_budget_ms: 20000\n"


@pytest.fixture(scope="module")
def edaemon(tmp_path_factory):
    proc = start_daemon(tmp_path_factory.mktemp("episodes-daemon"), CONFIG)
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def http(edaemon):
    with edaemon.client(timeout=300) as client:
        yield client


def hook(http, event: str, body: dict) -> dict:
    response = http.post(f"/api/hooks/{event}", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def end_session(http, key: str, transcript: str) -> dict:
    result = hook(http, "session-end", {"session_key": key, "transcript": transcript, "wait": True})
    assert result["summary"]["status"] == "done", result
    return result["summary"]


def session_memories(http, key: str, **params) -> list[dict]:
    response = http.get("/api/memory", params={"session_key": key, "limit": 1000, **params})
    assert response.status_code == 200, response.text
    return response.json()["items"]


def jsonl(turns: list[tuple[str, str, str]]) -> str:
    return "\n".join(json.dumps({"type": role, "timestamp": at, "message": {"role": role, "content": text}})
                     for role, text, at in turns)


def test_episodes_keep_time_and_position_and_are_idempotent(http):
    project, key = f"ep-{uuid.uuid4().hex[:6]}", f"sess-{uuid.uuid4().hex}"
    hook(http, "session-start", {"session_key": key, "project": project, "timestamp": "2025-03-01T09:00:00Z"})
    transcript = jsonl([
        ("user", "The flux capacitor test flakes on CI, any idea why?", "2025-03-01T09:01:00Z"),
        ("assistant", "It reads the wall clock; freeze time in the fixture.", "2025-03-01T09:02:00Z"),
        ("user", "Good. Also my token is sk-ant-abcdefghijklmnopqrstuvwxyz0123 for the deploy.", "2025-03-01T09:05:00Z"),
        ("assistant", "Noted, I will not store it.", "2025-03-01T09:06:00Z"),
    ])
    first = end_session(http, key, transcript)
    assert first["episodes"]["stored"] == 2
    episodes = sorted(session_memories(http, key, type="episode"), key=lambda m: m["metadata"]["episode_position"])
    assert [e["metadata"]["episode_position"] for e in episodes] == [0, 1]
    assert [e["created_at"][:19] for e in episodes] == ["2025-03-01T09:01:00", "2025-03-01T09:05:00"]
    assert episodes[0]["content"].startswith("User: The flux capacitor") and "Assistant: It reads" in episodes[0]["content"]
    assert "sk-ant-abcdefghij" not in episodes[1]["content"] and all(e["project"] == project for e in episodes)
    again = end_session(http, key, transcript)  # session-end re-run: nothing stored twice
    assert again["episodes"]["stored"] == 0
    assert len(session_memories(http, key, type="episode")) == 2
    hits = http.post("/api/memory/recall", json={"query": "why does the flux capacitor test flake", "project": project})
    assert episodes[0]["id"] in [h["id"] for h in hits.json()["results"]][:3]
    detail = http.get(f"/api/sessions/{key}").json()
    assert {e["id"] for e in episodes} <= {m["id"] for m in detail["created"]}


def test_episodes_switch_off(tmp_path_factory):
    proc = start_daemon(tmp_path_factory.mktemp("episodes-off"), CONFIG + "  episodes: false\n")
    try:
        with proc.client(timeout=300) as client:
            key = f"sess-{uuid.uuid4().hex}"
            summary = end_session(client, key, "User: where do the logs go?\nAssistant: To /var/log/app.\n")
            assert summary["episodes"]["stored"] == 0 and session_memories(client, key, type="episode") == []
    finally:
        proc.stop()


def test_first_prompt_gets_a_full_injection_later_prompts_five(http):
    project, key = f"inj-{uuid.uuid4().hex[:6]}", f"sess-{uuid.uuid4().hex}"
    memories = [{"content": f"Invoice rounding rule {i}: invoices for region {i} round totals half-even to cents",
                 "project": project, "importance": 0.2} for i in range(30)]
    memories += [{"content": f"Unrelated note {i} about garden hoses and tomato watering", "project": project,
                  "importance": 0.9} for i in range(15)]
    ids = [r["id"] for r in http.post("/api/memory/batch", json={"memories": memories}).json()["results"]]
    start = hook(http, "session-start", {"session_key": key, "project": project, "context": "garden"})
    global_id = http.post("/api/memory/remember", json={"content": "The zebra billing queue flushes at midnight UTC"}).json()["id"]
    first = hook(http, "user-prompt-submit", {"session_key": key, "prompt": "How are invoice totals rounded to cents?"})
    assert 5 < len(first["memory_ids"]) <= 12
    assert not set(first["memory_ids"]) & set(start["memory_ids"])
    ids_line = next(line for line in first["inject"].splitlines() if line.startswith("IDs: "))
    assert set(first["memory_ids"]) <= set(ids_line[5:].split(", ")) <= set(first["memory_ids"]) | set(start["memory_ids"])
    second = hook(http, "user-prompt-submit", {"session_key": key, "prompt": "Which invoice regions round half-even?"})
    assert 0 < len(second["memory_ids"]) <= 5 and not set(second["memory_ids"]) & set(first["memory_ids"])
    ids_line = next(line for line in second["inject"].splitlines() if line.startswith("IDs: "))
    assert sorted(ids_line[5:].split(", ")) == sorted(second["memory_ids"])  # exactly what this answer showed
    third = hook(http, "user-prompt-submit", {"session_key": key, "prompt": "When does the zebra billing queue flush?"})
    assert global_id in third["memory_ids"]  # per-prompt recall includes global (no-project) memories
    rows = {r["memory_id"]: r for r in http.get(f"/api/sessions/{key}").json()["memories"]}
    assert {rows[m]["inject_phase"] for m in first["memory_ids"]} == {"prompt:1"}
    assert {rows[m]["inject_phase"] for m in second["memory_ids"]} == {"prompt:2"}
