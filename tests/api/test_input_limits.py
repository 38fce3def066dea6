"""Bad input over real HTTP is a 4xx with {"error": …}, never a 500, and stores nothing.

Offsets past 2^63, lone UTF-16 surrogates, 1,000-deep JSON, the S10 caps, invisible content
and created_at bounds.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from kenning.core import limits

HOOKS = ["session-start", "user-prompt-submit", "pre-compaction", "checkpoint", "feedback",
         "post-tool-use", "session-end"]
LIST_ROUTES = ["/api/memory", "/api/sessions", "/api/documents", "/api/graph/entities", "/api/analytics/errors",
               "/api/logs", "/api/predictor/comparisons", "/api/predictor/training", "/api/timeline/{id}"]
JSON = {"content-type": "application/json"}


@pytest.fixture
def http(daemon):
    with daemon.client() as client:
        yield client


@pytest.fixture
def project() -> str:
    return f"limits-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def memory_id(http, project) -> str:
    return http.post("/api/memory/remember", json={"content": "the anchor memory", "project": project}).json()["id"]


def _count(http, project) -> int:
    return http.get("/api/memory", params={"project": project}).json()["total"]


def _error(response, status: int | tuple[int, ...]) -> str:
    statuses = status if isinstance(status, tuple) else (status,)
    assert response.status_code in statuses, response.text
    return response.json()["error"]


@pytest.mark.parametrize("route", LIST_ROUTES)
def test_offsets_past_2_63_are_a_422(http, memory_id, route):
    path = route.replace("{id}", memory_id)
    for offset in (2**63, 2**64 + 5, 10**30):
        assert "offset" in _error(http.get(path, params={"offset": offset}), 422)
    assert http.get(path, params={"offset": limits.MAX_OFFSET}).status_code == 200


def test_lone_surrogates_are_refused_and_pairs_kept(http, project):
    for raw in (b'"a\\ud800b"', b'"\\udfff"', b'"x\\uDBFF"'):
        body = b'{"content": ' + raw + b', "project": "' + project.encode() + b'"}'
        assert "surrogate" in _error(http.post("/api/memory/remember", content=body, headers=JSON), 400)
    assert _count(http, project) == 0
    pair = b'{"content": "emoji \\ud83d\\ude00 and an escaped \\\\ud800", "project": "' + project.encode() + b'"}'
    stored = http.post("/api/memory/remember", content=pair, headers=JSON)
    assert stored.status_code == 200, stored.text
    assert http.get(f"/api/memory/{stored.json()['id']}").json()["content"] == "emoji \U0001F600 and an escaped \\ud800"


def test_surrogates_in_session_end_store_nothing(http):
    key = f"sur-{uuid.uuid4().hex}"
    body = b'{"session_key": "' + key.encode() + b'", "transcript": "user: hi\\udc80 there"}'
    assert "surrogate" in _error(http.post("/api/hooks/session-end", content=body, headers=JSON), 400)
    assert http.get(f"/api/sessions/{key}").status_code == 404


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("hook", HOOKS)
def test_thousand_deep_json_on_every_hook_is_a_400(http, hook):
    key = f"deep-{uuid.uuid4().hex}"
    body = '{"session_key": "%s", "prompt": "hi", "extra": %s}' % (key, _deep(1000))
    assert "nested deeper" in _error(http.post(f"/api/hooks/{hook}", content=body.encode(), headers=JSON), 400)
    whole = _deep(1000).encode()
    assert "nested deeper" in _error(http.post(f"/api/hooks/{hook}", content=whole, headers=JSON), 400)
    assert http.get(f"/api/sessions/{key}").status_code == 404


def test_deep_json_elsewhere_and_brackets_inside_strings(http, project):
    body = '{"content": "x", "metadata": {"a": %s}}' % _deep(1000)
    assert "nested deeper" in _error(http.post("/api/memory/remember", content=body.encode(), headers=JSON), 400)
    text = "[[[[" * 500  # brackets inside a string are text, not nesting
    ok = http.post("/api/memory/remember", json={"content": text, "project": project})
    assert ok.status_code == 200, ok.text


@pytest.mark.parametrize("content", ["\u200b\u200b", "\ufeff", " \t\r\n ", "\x00\x01\x1f", "\u2060\u00ad\u200d",
                                     "\u3000\u3164", "\u202e\u202d"])
def test_invisible_content_is_refused(http, project, content):
    assert "visible" in _error(http.post("/api/memory/remember", json={"content": content, "project": project}), 422)
    batch = http.post("/api/memory/batch", json={"memories": [{"content": "fine", "project": project},
                                                              {"content": content, "project": project}]})
    assert "visible" in _error(batch, 422)
    assert _count(http, project) == 0


def test_invisible_edit_and_tag_are_refused(http, memory_id):
    assert "visible" in _error(http.patch(f"/api/memory/{memory_id}", json={"content": "\u200b"}), 422)
    assert "visible" in _error(http.patch(f"/api/memory/{memory_id}", json={"tags": ["\ufeff"]}), 422)
    assert http.get(f"/api/memory/{memory_id}").json()["content"] == "the anchor memory"


@pytest.mark.parametrize("extra, fragment", [
    ({"tags": ["t" * (limits.MAX_TAG_CHARS + 1)]}, "tags"),
    ({"tags": [f"t{i}" for i in range(limits.MAX_TAGS + 1)]}, "tags"),
    ({"project": "p" * (limits.MAX_PROJECT_CHARS + 1)}, "project"),
    ({"scope": "s" * 100}, "scope"),
    ({"source": "s" * (limits.MAX_SOURCE_CHARS + 1)}, "source"),
    ({"session_key": "k" * (limits.MAX_SESSION_KEY_CHARS + 1)}, "session_key"),
    ({"related_files": ["f"] * (limits.MAX_RELATED_FILES + 1)}, "related_files"),
])
def test_field_caps_are_422_with_the_field_named(http, project, extra, fragment):
    body = {"content": "capped fields", "project": project, **extra}
    assert fragment in _error(http.post("/api/memory/remember", json=body), 422)
    if "project" not in extra:
        assert _count(http, project) == 0


def test_metadata_cap(http, project):
    big = {"blob": "m" * limits.MAX_METADATA_BYTES}
    error = _error(http.post("/api/memory/remember", json={"content": "meta", "project": project, "metadata": big}), 400)
    assert "metadata" in error and str(limits.MAX_METADATA_BYTES) in error
    assert _count(http, project) == 0
    small = http.post("/api/memory/remember", json={"content": "meta", "project": project, "metadata": {"k": "v"}})
    assert small.status_code == 200


def test_query_cap(http):
    assert "query" in _error(http.post("/api/memory/recall", json={"query": "q" * (limits.MAX_QUERY_CHARS + 1)}), 422)
    assert http.post("/api/memory/recall", json={"query": "q" * limits.MAX_QUERY_CHARS}).status_code == 200


def test_created_at_bounds(http, project):
    now = datetime.now(timezone.utc)
    for bad in ("1969-12-31T23:59:59Z", "0001-01-01T00:00:00Z", (now + timedelta(days=2)).isoformat(),
                "9999-12-31T23:59:59-23:00"):
        response = http.post("/api/memory/remember", json={"content": f"dated {bad}", "project": project,
                                                           "created_at": bad})
        assert "created_at" in _error(response, (400, 422)), bad
    assert "created_at" in _error(http.post("/api/memory/remember", json={
        "content": "a number is not a date", "project": project, "created_at": 0}), 422)
    assert _count(http, project) == 0
    for good in ("1970-01-01T00:00:00Z", (now + timedelta(hours=12)).isoformat()):
        assert http.post("/api/memory/remember", json={"content": f"dated {good}", "project": project,
                                                       "created_at": good}).status_code == 200
    assert _count(http, project) == 2


def test_hook_timestamps_are_bounded(http):
    key = f"ts-{uuid.uuid4().hex}"
    response = http.post("/api/hooks/session-start", json={"session_key": key, "timestamp": "1900-01-01T00:00:00Z"})
    assert "timestamp" in _error(response, 400)
    assert http.get(f"/api/sessions/{key}").status_code == 404


def test_every_list_route_declares_a_bounded_offset(daemon):
    schema = json.loads(daemon.get("/openapi.json").text)
    for route in LIST_ROUTES:
        params = schema["paths"][route.replace("{id}", "{ident}")]["get"]["parameters"]
        offset = next(p for p in params if p["name"] == "offset")
        assert offset["schema"]["maximum"] == limits.MAX_OFFSET, route
