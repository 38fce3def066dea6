"""GET /api/diagnostics[/domain] and POST /api/diagnostics/repair against a real daemon.

The point of these tests: health must go red when the store is silently broken (full-text
index out of sync, vectors missing, embedding provider down), and green again after repair.
Breakage is simulated the way real bugs look: a missing trigger, lost vector rows, a dead server.
"""

from __future__ import annotations

import sqlite3

import pytest

DOMAINS = {"queue", "storage", "index", "provider", "mutation", "duplicate", "connector", "predictor"}
STATUSES = {"healthy", "degraded", "unhealthy", "cold_start", "disabled"}


def remember(http, content, **kw):
    response = http.post("/api/memory/remember", json={"content": content, **kw})
    assert response.status_code == 200, response.text
    return response.json()["id"]


def raw_sql(daemon, sql: str) -> None:
    """Simulate a bug from outside the daemon (the stdlib binding needs no extensions for this)."""
    conn = sqlite3.connect(daemon.home / "memories.db", timeout=30)
    try:
        conn.executescript(sql)
    finally:
        conn.close()


def test_report_shape_and_every_domain(http):
    remember(http, "The deploy pipeline runs on GitHub Actions")
    report = http.get("/api/diagnostics").json()
    assert set(report["domains"]) == DOMAINS
    assert 0 <= report["composite"]["score"] <= 1 and report["composite"]["status"] in STATUSES
    for name, domain in report["domains"].items():
        assert domain["domain"] == name and domain["status"] in STATUSES
        assert 0 <= domain["score"] <= 1 and isinstance(domain["metrics"], dict)
        for problem in domain["problems"]:
            assert problem["message"] and problem["fix"] and problem["severity"] in ("error", "warning")
        single = http.get(f"/api/diagnostics/{name}").json()
        assert single["domain"] == name and single["status"] in STATUSES
    assert report["domains"]["index"]["status"] == "healthy"
    assert report["domains"]["index"]["metrics"]["embedding_model"] == "openai:fake-bow"
    assert report["domains"]["predictor"]["status"] == "disabled"


def test_unknown_domain_is_404_with_the_choices(http):
    response = http.get("/api/diagnostics/nonsense")
    assert response.status_code == 404
    assert "queue" in response.json()["error"] and "predictor" in response.json()["error"]


def test_fts_out_of_sync_goes_red_then_repair_fixes_it(http, obs_daemon):
    remember(http, "Indexed before the bug: the API gateway is Kong")
    raw_sql(obs_daemon, "DROP TRIGGER memories_fts_ai;")
    lost = remember(http, "Written while the FTS trigger was missing: the cache is Redis 7")
    index = http.get("/api/diagnostics/index").json()
    assert index["status"] == "unhealthy" and index["metrics"]["fts_missing"] == 1
    assert any("full-text index out of sync" in p["message"] for p in index["problems"])
    report = http.get("/api/diagnostics").json()
    assert report["composite"]["status"] == "unhealthy"  # one red domain turns the whole report red
    assert report["problems"][0]["severity"] == "error"
    keyword = http.post("/api/memory/recall", json={"query": "Redis", "preset": "bm25"}).json()["results"]
    assert lost not in [r["id"] for r in keyword]  # the user-visible symptom health is warning about

    repaired = http.post("/api/diagnostics/repair", json={"actions": ["rebuild_fts"]}).json()
    assert repaired["results"][0] == {"action": "rebuild_fts", "fts_rows": 2, "fts_missing": 0}
    assert repaired["report"]["domains"]["index"]["status"] == "healthy"
    keyword = http.post("/api/memory/recall", json={"query": "Redis", "preset": "bm25"}).json()["results"]
    assert lost in [r["id"] for r in keyword]


def test_missing_vectors_go_red_then_reembed_fixes_them(http, obs_daemon):
    for i in range(8):
        remember(http, f"Service number {i} owns the {['billing', 'search', 'auth', 'mail'][i % 4]} domain")
    assert http.get("/api/diagnostics/index").json()["status"] == "healthy"
    # what a model switch without re-embedding looks like: no vector for the model in use
    raw_sql(obs_daemon, "UPDATE embeddings SET model = 'old-model';")
    index = http.get("/api/diagnostics/index").json()
    assert index["status"] == "unhealthy" and index["metrics"]["embeddings_missing"] == 8
    out = http.post("/api/diagnostics/repair", json={"actions": ["reembed"]}).json()
    assert out["results"][0]["embedded"] == 8
    assert out["report"]["domains"]["index"]["status"] == "healthy"


def test_dead_embedding_provider_turns_provider_red(http, fake_embeddings):
    remember(http, "Recorded while the embedding server was up")
    fake_embeddings.fail = True
    failed = http.post("/api/memory/remember", json={"content": "This one cannot be embedded"})
    assert failed.status_code == 502
    provider = http.get("/api/diagnostics/provider").json()
    assert provider["status"] == "unhealthy"
    messages = " ".join(p["message"] for p in provider["problems"])
    assert "embedding provider openai:fake-bow fails" in messages and "provider error" in messages
    fake_embeddings.fail = False


def test_repair_rejects_unknown_actions(http):
    response = http.post("/api/diagnostics/repair", json={"actions": ["drop_everything"]})
    assert response.status_code == 400 and "rebuild_fts" in response.json()["error"]
    assert http.post("/api/diagnostics/repair", json={"bogus": 1}).status_code == 422


@pytest.mark.parametrize("path", ["/api/diagnostics", "/api/diagnostics/queue"])
def test_listed_in_openapi(http, path):
    assert path.replace("queue", "{domain}") in http.get("/openapi.json").json()["paths"]
