"""A hook body is parsed once, by its route (issue 34): the router's guard reads only the path (the spool
replay's kick); a transcript the hook refused to read is counted by the route that carries a transcript
(pre-compaction, session-end, the spool's replay), from the field it declares."""

from __future__ import annotations

import uuid


def _refusals(c) -> dict[str, int]:
    return c.get("/api/diagnostics/connector").json()["metrics"]["transcript_refusals"]


def test_refusals_are_counted_by_the_routes_that_carry_a_transcript(daemon):
    key = f"guard-{uuid.uuid4().hex[:8]}"
    with daemon.client() as c:
        before = _refusals(c)
        r = c.post("/api/hooks/pre-compaction", json={"session_key": key, "trigger": "auto",
                                                      "transcript_refused": "outside_roots"})
        assert r.status_code == 200, r.text
        r = c.post("/api/hooks/user-prompt-submit", json={"session_key": key, "prompt": "where is the deploy doc?",
                                                          "transcript_refused": "missing"})  # no transcript here
        assert r.status_code == 200, r.text
        r = c.post("/api/hooks/session-end", json={"session_key": key, "transcript": None,
                                                   "transcript_refused": "bogus"})  # not a reason: ignored, not a 400
        assert r.status_code == 200, r.text
        r = c.post("/api/hooks/session-end", json={"session_key": key, "transcript": None,
                                                   "transcript_refused": "too_large"})
        assert r.status_code == 200, r.text
        r = c.post("/api/hooks/event", json={"kind": "session_started", "session_key": f"{key}-ev"})
        assert r.status_code == 200, r.text
        after = _refusals(c)
    grown = {reason: after.get(reason, 0) - before.get(reason, 0) for reason in set(after) | set(before)}
    assert {reason: n for reason, n in grown.items() if n} == {"outside_roots": 1, "too_large": 1}, grown
    schema = daemon.client().get("/openapi.json").json()["components"]["schemas"]
    assert "transcript_refused" in schema["SessionEndIn"]["properties"]
    assert "transcript_refused" in schema["CheckpointIn"]["properties"]
