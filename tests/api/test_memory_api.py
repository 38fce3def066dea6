"""The memory HTTP contract against a real daemon process and the real bundled model."""

from __future__ import annotations

import threading
import uuid

import pytest


@pytest.fixture
def project() -> str:
    return f"p-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def http(daemon):
    with daemon.client() as client:
        yield client


def remember(http, content, **kw):
    response = http.post("/api/memory/remember", json={"content": content, **kw})
    assert response.status_code == 200, response.text
    return response.json()


def test_health_and_openapi(http):
    health = http.get("/api/health").json()
    assert health["status"] == "ok" and health["version"]
    paths = http.get("/openapi.json").json()["paths"]
    for path in ("/api/memory/remember", "/api/memory/recall", "/api/memory/{memory_id}",
                 "/api/memory/{memory_id}/recover", "/api/memory"):
        assert path in paths


def test_remember_dedup_and_get(http, project):
    first = remember(http, "The billing service talks to PostgreSQL 16", project=project, tags=["db"])
    again = remember(http, "the billing service talks to postgresql 16.", project=project)
    assert first["deduped"] is False and again == {"id": first["id"], "deduped": True}
    memory = http.get(f"/api/memory/{first['id']}").json()
    assert memory["content"] == "The billing service talks to PostgreSQL 16"
    assert memory["tags"] == ["db"] and memory["history"][0]["event"] == "created"


def test_recall_reports_legs_and_respects_project(http, project):
    other = project + "-other"
    target = remember(http, "Use pnpm, never npm, in the web repo", project=project, type="preference")["id"]
    remember(http, "The API is deployed with helm charts", project=project)
    remember(http, "Use pnpm, never npm, in the web repo", project=other)
    body = http.post("/api/memory/recall", json={"query": "which package manager do we use?", "project": project}).json()
    results = body["results"]
    assert results[0]["id"] == target
    assert "vector" in results[0]["legs"] and results[0]["legs"]["vector"]["rank"] == 1
    assert {r["project"] for r in results} == {project}
    keyword = http.post("/api/memory/recall", json={"query": "pnpm", "project": project}).json()["results"]
    assert keyword[0]["legs"]["bm25"]["rank"] == 1
    typed = http.post("/api/memory/recall", json={"query": "pnpm", "project": project, "types": ["fact"]}).json()
    assert target not in [r["id"] for r in typed["results"]]


def test_recall_time_range_and_created_at(http, project):
    old = remember(http, "legacy deploys used capistrano", project=project, created_at="2021-03-04T05:06:07Z")["id"]
    remember(http, "deploys use argo cd", project=project)
    assert http.get(f"/api/memory/{old}").json()["created_at"] == "2021-03-04T05:06:07.000Z"
    body = {"query": "how do deploys work", "project": project, "until": "2022-01-01T00:00:00Z"}
    assert [r["id"] for r in http.post("/api/memory/recall", json=body).json()["results"]] == [old]


def test_edit_forget_recover(http, project):
    memory_id = remember(http, "timeouts are 30 seconds", project=project)["id"]
    edited = http.patch(f"/api/memory/{memory_id}", json={"content": "timeouts are 45 seconds", "pinned": True}).json()
    assert edited["content"] == "timeouts are 45 seconds" and edited["pinned"] is True
    hits = http.post("/api/memory/recall", json={"query": "45 seconds", "project": project}).json()["results"]
    assert hits[0]["id"] == memory_id
    assert http.delete(f"/api/memory/{memory_id}").json()["is_deleted"] is True
    hits = http.post("/api/memory/recall", json={"query": "timeouts", "project": project}).json()["results"]
    assert memory_id not in [h["id"] for h in hits]
    listed = http.get("/api/memory", params={"project": project}).json()
    assert memory_id not in [m["id"] for m in listed["items"]]
    assert http.post(f"/api/memory/{memory_id}/recover").json()["is_deleted"] is False
    events = [h["event"] for h in http.get(f"/api/memory/{memory_id}").json()["history"]]
    assert events == ["created", "updated", "deleted", "recovered"]


def test_list_pagination_and_filters(http, project):
    ids = [remember(http, f"note number {i} about pagination", project=project, type="fact" if i % 2 else "decision")["id"] for i in range(5)]
    page1 = http.get("/api/memory", params={"project": project, "limit": 2}).json()
    page2 = http.get("/api/memory", params={"project": project, "limit": 2, "offset": 2}).json()
    assert page1["total"] == 5 and len(page1["items"]) == 2 and len(page2["items"]) == 2
    assert not {m["id"] for m in page1["items"]} & {m["id"] for m in page2["items"]}
    decisions = http.get("/api/memory", params={"project": project, "type": "decision"}).json()
    assert decisions["total"] == 3 and set(m["id"] for m in decisions["items"]) <= set(ids)


@pytest.mark.parametrize("body, fragment", [
    ({"content": ""}, "content"),
    ({"content": "   "}, "content"),
    ({"content": 42}, "content"),
    ({"content": "x", "importance": 2}, "importance"),
    ({"content": "x", "importance": "high"}, "importance"),
    ({"content": "x", "type": "nonsense"}, "type"),
    ({"content": "x", "tags": "not-a-list"}, "tags"),
    ({"content": "x", "created_at": "yesterday"}, "created_at"),
    ({"nothing": "here"}, "content"),
])
def test_bad_input_is_a_clear_4xx_and_loses_nothing(http, project, body, fragment):
    keep = remember(http, "this must survive bad requests", project=project)["id"]
    response = http.post("/api/memory/remember", json={**body, "project": project})
    assert 400 <= response.status_code < 500
    assert fragment in response.json()["error"]
    assert http.get(f"/api/memory/{keep}").status_code == 200
    assert http.get("/api/memory", params={"project": project}).json()["total"] == 1


def test_ten_megabytes_rejected(http, project):
    response = http.post("/api/memory/remember", json={"content": "a" * 10_000_000, "project": project})
    assert response.status_code == 400 and "limit" in response.json()["error"]
    assert http.get("/api/memory", params={"project": project}).json()["total"] == 0


def test_unknown_ids_and_bad_json(http):
    for method, path in (("GET", "/api/memory/nope"), ("PATCH", "/api/memory/nope"),
                         ("DELETE", "/api/memory/nope"), ("POST", "/api/memory/nope/recover")):
        kwargs = {"json": {"content": "x"}} if method == "PATCH" else {}
        response = http.request(method, path, **kwargs)
        assert response.status_code == 404 and "nope" in response.json()["error"]
    response = http.post("/api/memory/remember", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 422 and response.json()["error"]
    assert http.post("/api/memory/recall", json={"query": ""}).status_code == 422
    assert "preset" in http.post("/api/memory/recall", json={"query": "x", "preset": "bogus"}).json()["error"]


def test_concurrent_http_writers(http, daemon, project):
    errors: list[str] = []

    def write(t: int) -> None:
        with daemon.client() as c:
            for i in range(15):
                r = c.post("/api/memory/remember", json={"content": f"writer {t} fact {i}", "project": project})
                if r.status_code != 200:
                    errors.append(r.text)

    threads = [threading.Thread(target=write, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert http.get("/api/memory", params={"project": project}).json()["total"] == 60


def test_access_tracking_happens_after_recall(http, project):
    memory_id = remember(http, "the staging password rotates monthly", project=project)["id"]
    assert http.get(f"/api/memory/{memory_id}").json()["access_count"] == 0
    http.post("/api/memory/recall", json={"query": "staging password", "project": project})
    import time

    for _ in range(50):
        if http.get(f"/api/memory/{memory_id}").json()["access_count"] == 1:
            break
        time.sleep(0.1)
    assert http.get(f"/api/memory/{memory_id}").json()["access_count"] == 1
