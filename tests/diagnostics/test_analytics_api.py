"""/api/analytics/latency, /api/analytics/errors, /api/logs and the JSON log file, over HTTP."""

from __future__ import annotations

import json

import pytest


def remember(http, content, **kw):
    response = http.post("/api/memory/remember", json={"content": content, **kw})
    assert response.status_code == 200, response.text
    return response.json()["id"]


def test_latency_percentiles_per_operation(http):
    for i in range(6):
        remember(http, f"Latency sample memory number {i} about caching")
        http.post("/api/memory/recall", json={"query": f"caching {i}"}).raise_for_status()
    ops = http.get("/api/analytics/latency").json()["operations"]
    for name in ("remember", "recall", "predictor_score", "predictor_train", "jobs", "hooks"):
        assert name in ops  # always listed, even before a first sample
    for name in ("remember", "recall"):
        s = ops[name]
        assert s["count"] >= 6
        assert 0 <= s["p50"] <= s["p95"] <= s["p99"] <= s["max"]
        assert len(s["recent"]) == min(50, s["count"]) and {"at", "ms"} <= set(s["recent"][0])
    assert ops["predictor_score"]["count"] == 0 and ops["predictor_score"]["p95"] is None


def test_latency_filters(http):
    remember(http, "One more sample for the filters")
    only = http.get("/api/analytics/latency", params={"operation": "remember", "recent": 1}).json()["operations"]
    assert list(only) == ["remember"] and len(only["remember"]["recent"]) == 1
    future = http.get("/api/analytics/latency", params={"operation": "remember", "since": "2999-01-01T00:00:00Z"})
    assert future.json()["operations"]["remember"]["count"] == 0
    assert http.get("/api/analytics/latency", params={"since": "yesterday"}).status_code == 400
    assert http.get("/api/analytics/latency", params={"recent": -1}).status_code == 422


def test_error_ring_stage_filter_and_pagination(http, fake_embeddings):
    remember(http, "Stored while the embedding server works")
    fake_embeddings.fail = True
    for i in range(3):
        assert http.post("/api/memory/remember", json={"content": f"cannot embed {i}"}).status_code == 502
    fake_embeddings.fail = False
    page = http.get("/api/analytics/errors", params={"stage": "api", "limit": 2}).json()
    assert page["total"] == 3 and len(page["items"]) == 2 and page["by_stage"]["api"] == 3
    assert all(e["stage"] == "api" and e["context"]["kind"] == "ProviderError" for e in page["items"])
    assert page["items"][0]["at"] >= page["items"][1]["at"]  # newest first
    rest = http.get("/api/analytics/errors", params={"stage": "api", "limit": 2, "offset": 2}).json()
    assert len(rest["items"]) == 1 and rest["items"][0] not in page["items"]
    none = http.get("/api/analytics/errors", params={"stage": "predictor"}).json()
    assert none["total"] == 0 and none["items"] == [] and none["by_stage"]["predictor"] == 0
    later = http.get("/api/analytics/errors", params={"since": "2999-01-01T00:00:00Z"}).json()
    assert later["total"] == 0
    assert http.get("/api/analytics/errors", params={"limit": 0}).status_code == 422
    assert http.get("/api/analytics/errors", params={"limit": 501}).status_code == 422


def test_logs_filters_and_pagination(http):
    remember(http, "A memory so the logs have company")
    everything = http.get("/api/logs", params={"limit": 500}).json()
    assert everything["total"] >= 1 and "daemon" in everything["categories"]
    daemon_logs = http.get("/api/logs", params={"category": "daemon"}).json()["items"]
    assert any(e["message"] == "service started" for e in daemon_logs)
    assert all(e["category"] == "daemon" for e in daemon_logs)
    found = http.get("/api/logs", params={"q": "SERVICE STARTED"}).json()["items"]
    assert found and all("service started" in e["message"] for e in found)
    assert http.get("/api/logs", params={"q": "no such text anywhere 42"}).json()["total"] == 0
    info = http.get("/api/logs", params={"level": "info", "limit": 1}).json()
    assert len(info["items"]) == 1 and info["items"][0]["level"] == "info" and info["limit"] == 1
    if info["total"] > 1:
        second = http.get("/api/logs", params={"level": "info", "limit": 1, "offset": 1}).json()["items"][0]
        assert second != info["items"][0]
    assert http.get("/api/logs", params={"level": "loud"}).status_code == 422


def test_errors_are_logged_with_category_error(http, fake_embeddings):
    fake_embeddings.fail = True
    http.post("/api/memory/remember", json={"content": "doomed to fail"})
    fake_embeddings.fail = False
    errors = http.get("/api/logs", params={"level": "error"}).json()["items"]
    assert errors and errors[0]["category"] == "error" and errors[0]["stage"] == "api"


def test_json_log_file_under_home(http, obs_daemon):
    remember(http, "Something worth a log line")
    path = obs_daemon.home / "logs" / "kenning.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert any(e.get("message") == "service started" and e.get("category") == "daemon" for e in lines)
    assert all({"at", "level", "category", "message"} <= set(e) for e in lines)


@pytest.mark.parametrize("path", ["/api/analytics/latency", "/api/analytics/errors", "/api/logs"])
def test_in_openapi(http, path):
    assert path in http.get("/openapi.json").json()["paths"]
