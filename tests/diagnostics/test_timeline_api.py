"""/api/timeline/{id}: a memory's and a session's story, interleaved and in time order."""

from __future__ import annotations

import uuid


def remember(http, content, **kw):
    response = http.post("/api/memory/remember", json={"content": content, **kw})
    assert response.status_code == 200, response.text
    return response.json()["id"]


def in_order(events):
    stamps = [e["at"] for e in events]
    return stamps == sorted(stamps)


def test_memory_timeline_lifecycle(http):
    mid = remember(http, "The search service uses Elasticsearch 8", project="tl")
    http.patch(f"/api/memory/{mid}", json={"content": "The search service uses OpenSearch 2"}).raise_for_status()
    http.delete(f"/api/memory/{mid}", params={"reason": "moved"}).raise_for_status()
    http.post(f"/api/memory/{mid}/recover").raise_for_status()
    body = http.get(f"/api/timeline/{mid}").json()
    assert body["id"] == mid and body["kind"] == "memory"
    history = [e for e in body["events"] if e["source"] == "history"]
    assert [e["event"] for e in history] == ["created", "updated", "deleted", "recovered"]
    assert history[2]["details"]["reason"] == "moved"
    assert in_order(body["events"]) and body["total"] == len(body["events"])
    assert isinstance(body["entities"], list)


def test_memory_timeline_filters_and_pagination(http):
    mid = remember(http, "Pagination target memory for the timeline")
    for i in range(3):
        http.patch(f"/api/memory/{mid}", json={"importance": 0.1 * (i + 2)}).raise_for_status()
    full = http.get(f"/api/timeline/{mid}", params={"source": "history"}).json()
    assert full["total"] == 4 and all(e["source"] == "history" for e in full["events"])
    page = http.get(f"/api/timeline/{mid}", params={"source": "history", "limit": 2, "offset": 1}).json()
    assert page["total"] == 4 and page["events"] == full["events"][1:3]


def test_timeline_errors(http):
    assert http.get("/api/timeline/does-not-exist").status_code == 404
    mid = remember(http, "Exists, but the filter is wrong")
    bad = http.get(f"/api/timeline/{mid}", params={"source": "gossip"})
    assert bad.status_code == 400 and "history" in bad.json()["error"]
    assert http.get(f"/api/timeline/{mid}", params={"limit": 0}).status_code == 422


def test_session_timeline_joins_session_candidates_history_and_jobs(http):
    key = f"sess-{uuid.uuid4().hex[:8]}"
    for text in ("The billing worker retries webhooks three times",
                 "Billing invoices are rendered with WeasyPrint",
                 "Webhook secrets live in Vault under billing/"):
        remember(http, text, project="billing", applies="project")  # only project-scope rules open a session (issue 31)
    start = http.post("/api/hooks/session-start", json={
        "session_key": key, "project": "billing", "context": "fix the billing webhook retries"})
    assert start.status_code == 200, start.text
    prompt = http.post("/api/hooks/user-prompt-submit", json={
        "session_key": key, "prompt": "why do billing webhooks retry three times?"})
    assert prompt.status_code == 200, prompt.text
    end = http.post("/api/hooks/session-end", json={
        "session_key": key, "wait": True,
        "transcript": "user: why do webhooks retry?\nassistant: the billing worker retries webhooks three times."})
    assert end.status_code == 200, end.text
    body = http.get(f"/api/timeline/{key}").json()
    assert body["kind"] == "session" and in_order(body["events"])
    kinds = {(e["source"], e["event"]) for e in body["events"]}
    assert ("session", "started") in kinds and ("session", "ended") in kinds
    assert ("session", "continuity_scored") in kinds
    assert ("predictor", "prefilter") in kinds and ("predictor", "scored") in kinds
    assert any(source == "job" for source, _ in kinds)
    first = body["events"][0]
    assert (first["source"], first["event"]) == ("session", "started")
    only_predictor = http.get(f"/api/timeline/{key}", params={"source": "predictor"}).json()["events"]
    assert only_predictor and all(e["source"] == "predictor" for e in only_predictor)
    injected = start.json()["memory_ids"]
    assert injected
    memory_story = http.get(f"/api/timeline/{injected[0]}").json()
    assert any(e["source"] == "session" and e["event"] == "injected" and e["details"]["session_key"] == key
               for e in memory_story["events"])
