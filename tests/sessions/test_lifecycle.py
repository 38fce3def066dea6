"""The session hook contract against a real daemon: rows left behind, pool bound, idempotency."""

from __future__ import annotations

import uuid

import pytest
from bench.harnesses.daemon import start_daemon

# a generous budget: these tests check what gets recorded, not how fast (bench/hooks.py does that)
CONFIG = "sessions:\n  latency_budget_ms: 20000\n"

FACTS = [
    ("We deploy the payments service with scripts/deploy-payments.sh", "procedural"),
    ("The payments service uses PostgreSQL 16 with pgbouncer in front", "fact"),
    ("Never run database migrations on Fridays", "constraint"),
    ("The user prefers pytest fixtures over unittest setUp methods", "preference"),
    ("CI caches break when uv.lock changes; clear the cache key by hand", "gotcha"),
    ("Feature flags live in config/flags.yaml and reload without restart", "fact"),
]
RARE = "The zyxwvut compiler flag enables quux turbo mode for nightly builds"


@pytest.fixture(scope="module")
def sdaemon(tmp_path_factory):
    proc = start_daemon(tmp_path_factory.mktemp("sessions-daemon"), CONFIG)
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def http(sdaemon):
    with sdaemon.client(timeout=300) as client:
        yield client


def batch(http, memories: list[dict]) -> list[str]:
    ids = []
    for start in range(0, len(memories), 500):
        response = http.post("/api/memory/batch", json={"memories": memories[start:start + 500]})
        assert response.status_code == 200, response.text
        ids += [r["id"] for r in response.json()["results"]]
    return ids


def hook(http, event: str, body: dict, status: int = 200) -> dict:
    response = http.post(f"/api/hooks/{event}", json=body)
    assert response.status_code == status, response.text
    return response.json()


@pytest.fixture(scope="module")
def seeded(http):
    project = f"shop-{uuid.uuid4().hex[:6]}"
    fact_ids = batch(http, [{"content": c, "type": t, "importance": 0.9, "project": project, "applies": "project"}
                             for c, t in FACTS])  # project-wide rules open sessions (issue 31)
    fillers = [{"content": f"Gardening note {i}: water the tomato bed number {i} every {i % 5 + 2} days",
                "importance": 0.3, "project": project} for i in range(110)]
    batch(http, fillers)
    rare_id = batch(http, [{"content": RARE, "importance": 0.0, "project": project}])[0]
    return {"project": project, "facts": fact_ids, "rare": rare_id}


def rows_by_id(http, key: str) -> dict[str, dict]:
    detail = http.get(f"/api/sessions/{key}").json()
    return {m["memory_id"]: m for m in detail["memories"]}


def test_full_session_leaves_the_right_rows(http, seeded):
    key = f"sess-{uuid.uuid4().hex}"
    start = hook(http, "session-start", {
        "session_key": key, "harness": "claude-code", "project": seeded["project"], "cwd": "/src/shop",
        "context": "tending the tomato garden beds",
    })
    assert set(start) >= {"inject", "memory_ids", "candidates", "status_line"}
    # the status line is the user's (dashboard, CLI), never the model's context (issue 32)
    assert start["status_line"].startswith("[predictor:") and "[predictor:" not in start["inject"]
    assert 0 < start["candidates"] <= 100 and start["memory_ids"]
    for memory_id in start["memory_ids"]:
        assert f"[{memory_id}]" in start["inject"]
    assert set(seeded["facts"]) <= set(start["memory_ids"])  # importance 0.9 leads the baseline
    rows = rows_by_id(http, key)
    assert len(rows) == start["candidates"] and seeded["rare"] not in rows
    assert {r["source"] for r in rows.values()} <= {"effective", "similarity", "both"}
    assert sum(r["was_injected"] for r in rows.values()) == len(start["memory_ids"])
    assert all(r["baseline_rank"] and r["effective_score"] is not None for r in rows.values())

    m1, m2, m3 = seeded["facts"][:3]
    p1 = hook(http, "user-prompt-submit", {"session_key": key, "prompt": "How do we deploy the payments service?"})
    assert m1 not in p1["memory_ids"]  # shown at session-start: merged into the first prompt, not repeated
    for memory_id in p1["memory_ids"]:
        assert f"[{memory_id}]" in p1["inject"]
    assert "<memory-feedback>" in p1["inject"] and m1 in p1["inject"]  # merged: rated, not repeated
    p2 = hook(http, "user-prompt-submit", {
        "session_key": key, "prompt": "Should I run the migration today?",
        "memory_feedback": {m1: 0.8, m2: -0.5, "not-a-memory": 1.0, m3: 7, "x": "high"},
    })
    assert p2["feedback_applied"] == 2 and p2["feedback_ignored"] == 3
    p3 = hook(http, "user-prompt-submit", {
        "session_key": key, "prompt": "what does the zyxwvut flag do?", "memory_feedback": {m1: 0.4},
    })
    assert seeded["rare"] in p3["memory_ids"] and f"[{seeded['rare']}]" in p3["inject"]

    rows = rows_by_id(http, key)
    assert rows[m1]["fts_hit_count"] >= 1 and rows[m2]["fts_hit_count"] >= 1
    assert rows[m1]["agent_feedback_count"] == 2 and rows[m1]["agent_relevance_score"] == pytest.approx(0.6)
    assert rows[m2]["agent_feedback_count"] == 1 and rows[m2]["agent_relevance_score"] == pytest.approx(-0.5)
    assert rows[m3]["agent_feedback_count"] == 0 and rows[m3]["agent_relevance_score"] is None
    rare = rows[seeded["rare"]]
    assert rare["source"] == "fts_only" and rare["fts_hit_count"] == 1
    assert rare["was_injected"] == 1 and rare["inject_phase"] == "prompt:3"

    transcript = (
        "User: How do we deploy the payments service?\n"
        "Assistant: Use scripts/deploy-payments.sh as usual.\n"
        "User: We decided to always deploy payments from the release branch.\n"
    )
    end = hook(http, "session-end", {"session_key": key, "transcript": transcript, "wait": True})
    assert end["queued"] is False and end["summary"]["status"] == "done"
    detail = http.get(f"/api/sessions/{key}").json()
    score = detail["score"]
    assert score["judge"] == "heuristic" and 0.0 <= score["score"] <= 1.0 and 0.0 < score["confidence"] <= 1.0
    assert score["memories_recalled"] == sum(1 for m in detail["memories"] if m["was_injected"])
    assert "heuristic" in score["continuity_reasoning"]
    injected = [m for m in detail["memories"] if m["was_injected"]]
    assert all(m["relevance_score"] is not None for m in injected)
    by_id = {m["memory_id"]: m for m in detail["memories"]}
    assert by_id[m1]["relevance_score"] > by_id[m2]["relevance_score"]  # rated 0.6 vs -0.5
    assert detail["transcript"]["chars"] == len(transcript)
    assert http.get(f"/api/sessions/{key}/transcript").text == transcript  # lossless
    assert detail["session"]["status"] == "ended" and detail["session"]["prompt_count"] == 3
    stored = end["summary"]["extraction"]
    assert stored["via"] in ("key-facts", "pipeline")
    listed = http.get("/api/sessions", params={"project": seeded["project"]}).json()
    assert key in [s["session_key"] for s in listed["sessions"]]


def test_session_start_is_idempotent(http, seeded):
    key = f"sess-{uuid.uuid4().hex}"
    body = {"session_key": key, "project": seeded["project"], "context": "payments deploy"}
    first = hook(http, "session-start", body)
    before = rows_by_id(http, key)
    again = hook(http, "session-start", body)
    assert again["memory_ids"] == first["memory_ids"] and again["candidates"] == first["candidates"]
    assert again["inject"] == first["inject"]
    assert rows_by_id(http, key) == before


def test_pool_stays_bounded_with_4000_memories(http):
    project = f"big-{uuid.uuid4().hex[:6]}"
    topics = ["auth", "billing", "search", "deploys", "caching", "logging", "queues", "frontend"]
    batch(http, [
        {"content": f"Note {i} on {topics[i % 8]}: component {i % 97} owns step {i % 13} of flow {i}",
         "importance": round((i % 10) / 10, 1), "project": project}
        for i in range(4000)
    ])
    key = f"sess-{uuid.uuid4().hex}"
    start = hook(http, "session-start", {"session_key": key, "project": project, "context": "billing flow work"})
    assert 50 <= start["candidates"] <= 100
    rows = rows_by_id(http, key)
    assert len(rows) == start["candidates"]
    assert {"effective", "similarity"} & {r["source"] for r in rows.values()}


def test_timestamp_replays_use_the_given_time(http, seeded):
    key = f"sess-{uuid.uuid4().hex}"
    start = hook(http, "session-start", {"session_key": key, "project": seeded["project"],
                                         "timestamp": "2020-01-01T00:00:00Z"})
    assert start["candidates"] == 0  # nothing existed yet in 2020
    hook(http, "user-prompt-submit", {"session_key": key, "prompt": "payments deploy?",
                                      "timestamp": "2020-01-01T00:05:00Z"})
    detail = http.get(f"/api/sessions/{key}").json()
    assert detail["session"]["started_at"] == "2020-01-01T00:00:00.000Z"
    assert detail["prompts"][0]["created_at"] == "2020-01-01T00:05:00.000Z"


def test_injection_is_not_an_access(http, seeded):
    before = {m: http.get(f"/api/memory/{m}").json()["access_count"] for m in seeded["facts"]}
    key = f"sess-{uuid.uuid4().hex}"
    hook(http, "session-start", {"session_key": key, "project": seeded["project"]})
    hook(http, "user-prompt-submit", {"session_key": key, "prompt": "payments deploy script?"})
    after = {m: http.get(f"/api/memory/{m}").json()["access_count"] for m in seeded["facts"]}
    assert after == before


def test_bad_payloads_get_a_clear_400(http):
    assert "session_key" in hook(http, "session-start", {"project": "x"}, 400)["error"]
    assert "prompt" in hook(http, "user-prompt-submit", {"session_key": "k"}, 400)["error"]
    assert "timestamp" in hook(http, "session-start", {"session_key": "k", "timestamp": "yesterday"}, 400)["error"]
    response = http.post("/api/hooks/session-start", content=b"not json", headers={"content-type": "application/json"})
    assert response.status_code == 400 and "JSON" in response.json()["error"]
    assert http.get("/api/sessions/no-such-session").status_code == 404


def test_checkpoints_are_redacted_and_capped(http):
    key = f"sess-{uuid.uuid4().hex}"
    hook(http, "session-start", {"session_key": key})
    secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345"
    out = hook(http, "pre-compaction", {"session_key": key, "context": f"export ANTHROPIC_API_KEY={secret}\nmore"})
    assert out["checkpoint_id"]
    hook(http, "checkpoint", {"session_key": key, "context": "Authorization: Bearer abcdefghijklmnop1234567890"})
    checkpoints = http.get(f"/api/sessions/{key}").json()["checkpoints"]
    assert [c["trigger"] for c in checkpoints] == ["pre-compaction", "manual"]
    text = "\n".join(c["content"] for c in checkpoints)
    assert secret not in text and "abcdefghijklmnop1234567890" not in text and "[REDACTED:" in text
