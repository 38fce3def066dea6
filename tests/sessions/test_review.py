"""Review over HTTP and the CLI against a real daemon: learned memories grouped by session,
accept / edit / reject (non-destructive), per-rule counts, 4xx on bad input, and what review
decides reaching session start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest
from bench.harnesses.daemon import start_daemon

CONFIG = "sessions:\n  latency_budget_ms: 20000\n"


@pytest.fixture(scope="module")
def rdaemon(tmp_path_factory):
    proc = start_daemon(tmp_path_factory.mktemp("review-daemon"), CONFIG)
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def http(rdaemon):
    with rdaemon.client(timeout=300) as client:
        yield client


def cli(daemon, *args):
    env = {**os.environ, "KENNING_HOME": str(daemon.home), "KENNING_PORT": str(daemon.port)}
    return subprocess.run([sys.executable, "-m", "kenning", "review", *args], env=env, capture_output=True,
                          text=True, timeout=300)


def learned(http, session_key: str, project: str, content: str, rule: str) -> str:
    """A memory as the session-end extraction writes one below the confidence gate."""
    r = http.post("/api/memory/remember", json={
        "content": content, "type": "constraint", "project": project, "confidence": 0.6,
        "source": "session-summary", "session_key": session_key, "created_at": "2026-01-01T00:00:00Z",
        "metadata": {"claim": {"rule": rule, "speaker": "assistant", "accepted": False, "confidence": 0.6}}})
    assert r.status_code == 200, r.text
    memory_id = r.json()["id"]
    assert http.patch(f"/api/memory/{memory_id}", json={"needs_review": True}).status_code == 200
    return memory_id


@pytest.fixture(scope="module")
def world(http):
    project = f"shop-{uuid.uuid4().hex[:6]}"
    key = f"learn-{uuid.uuid4().hex[:8]}"
    http.post("/api/hooks/session-start", json={"session_key": key, "project": project, "harness": "claude-code",
                                                 "timestamp": "2026-02-01T09:00:00Z"}).raise_for_status()
    http.post("/api/hooks/user-prompt-submit", json={"session_key": key, "prompt": "fix the checkout timeout in payments",
                                                      "timestamp": "2026-02-01T09:01:00Z"}).raise_for_status()
    http.post("/api/hooks/session-end", json={"session_key": key, "wait": True, "timestamp": "2026-02-01T09:30:00Z",
                                               "transcript": "User: fix the checkout timeout in payments\n"
                                                             "Assistant: Done, the timeout is 30 s now.\n"}).raise_for_status()
    ids = [learned(http, key, project, text, rule) for text, rule in [
        ("Checkout calls to the payment gateway must time out after 30 seconds", "stated-rule"),
        ("The payments service must retry a declined card once", "stated-rule"),
        ("Exactly, the webhook must be idempotent", "accepted-statement"),
    ]]
    return {"project": project, "key": key, "ids": ids}


def test_review_lists_learned_memories_grouped_by_session(http, world):
    data = http.get("/api/review", params={"project": world["project"]}).json()
    assert data["status"] == "pending" and data["total"] >= 3
    group = next(g for g in data["sessions"] if g["session_key"] == world["key"])
    assert group["task"] == "fix the checkout timeout in payments" and group["harness"] == "claude-code"
    by_id = {m["id"]: m for m in group["memories"]}
    assert set(world["ids"]) <= set(by_id)
    first = by_id[world["ids"][0]]
    assert first["needs_review"] is True and first["rule"] == "stated-rule" and first["evidence"]["speaker"] == "assistant"
    about = http.get("/api/review/sessions", params={"keys": world["key"]}).json()["sessions"][world["key"]]
    assert about["task"] == "fix the checkout timeout in payments" and about["learned"] >= 3 and about["pending"] >= 3


def test_review_actions_over_http_and_their_effect_at_session_start(http, world):
    accept_id, edit_id, reject_id = world["ids"]
    start = http.post("/api/hooks/session-start", json={"session_key": f"s-{uuid.uuid4().hex[:8]}",
                                                        "project": world["project"]}).json()
    assert not set(world["ids"]) & set(start["memory_ids"])  # needs_review: not shown unasked
    accepted = http.post(f"/api/review/{accept_id}/accept").json()
    assert accepted["user_verified"] is True and accepted["needs_review"] is False
    assert accepted["review"]["status"] == "accepted"
    edited = http.post(f"/api/review/{edit_id}/edit", json={"content": "The payments service retries a declined card once"}).json()
    assert edited["content"] == "The payments service retries a declined card once" and edited["review"]["status"] == "edited"
    rejected = http.post(f"/api/review/{reject_id}/reject", json={"reason": "a remark, not a rule"}).json()
    assert rejected["review"]["status"] == "rejected" and rejected["review"]["reason"] == "a remark, not a rule"
    kept = http.get(f"/api/memory/{reject_id}").json()
    assert kept["is_deleted"] is False and any(h["event"] == "updated" or h.get("reason") for h in kept["history"])
    pending = {m["id"] for g in http.get("/api/review", params={"project": world["project"]}).json()["sessions"]
               for m in g["memories"]}
    assert not set(world["ids"]) & pending
    rejected_list = {m["id"] for g in http.get("/api/review", params={"status": "rejected"}).json()["sessions"]
                     for m in g["memories"]}
    assert reject_id in rejected_list
    rules = {r["rule"]: r for r in http.get("/api/review/rules").json()["rules"]}
    assert rules["accepted-statement"]["rejected"] >= 1 and rules["accepted-statement"]["rejected_share"] == 1.0
    assert rules["stated-rule"]["accepted"] >= 2
    diagnostics = http.get("/api/diagnostics").json()["review_rules"]  # the same counts in diagnostics
    assert diagnostics["accepted-statement"]["rejected"] == rules["accepted-statement"]["rejected"]
    start = http.post("/api/hooks/session-start", json={"session_key": f"s-{uuid.uuid4().hex[:8]}",
                                                        "project": world["project"]}).json()
    assert {accept_id, edit_id} <= set(start["memory_ids"]) and reject_id not in start["memory_ids"]
    recalled = http.post("/api/memory/recall", json={"query": "webhook idempotent", "project": world["project"]}).json()
    assert reject_id in [r["id"] for r in recalled["results"]]  # a query still finds a rejected memory


@pytest.mark.parametrize("method,path,body", [
    ("GET", "/api/review?status=bogus", None),
    ("GET", "/api/review?limit=0", None),
    ("POST", "/api/review/no-such-memory/accept", None),
    ("POST", "/api/review/no-such-memory/reject", {}),
    ("POST", "/api/review/{id}/edit", {}),
    ("POST", "/api/review/{id}/edit", {"content": ""}),
    ("POST", "/api/review/{id}/edit", {"content": "x", "colour": "red"}),
    ("POST", "/api/review/{id}/edit", {"type": "no-such-type"}),
    ("POST", "/api/review/{id}/reject", {"reason": "x" * 501}),
    ("GET", "/api/review/sessions", None),
])
def test_bad_review_input_is_a_4xx_with_a_message(http, world, method, path, body):
    r = http.request(method, path.replace("{id}", world["ids"][1]), json=body)
    assert 400 <= r.status_code < 500, r.text
    assert r.json().get("error")


def test_review_cli(rdaemon, http, world):
    key = f"cli-{uuid.uuid4().hex[:8]}"
    project = world["project"]
    ids = [learned(http, key, project, text, "stated-gotcha") for text in (
        "Careful: the refund job must run after midnight UTC", "Turns out the ledger export must skip voided rows")]
    out = cli(rdaemon, "--project", project)
    assert out.returncode == 0, out.stderr
    assert ids[0] in out.stdout and "stated-gotcha" in out.stdout and "needs review" in out.stdout
    listed = json.loads(cli(rdaemon, "--project", project, "--json").stdout)
    assert {m["id"] for g in listed["sessions"] for m in g["memories"]} >= set(ids)
    assert cli(rdaemon, "accept", ids[0]).returncode == 0
    assert http.get(f"/api/memory/{ids[0]}").json()["user_verified"] is True
    done = cli(rdaemon, "reject", ids[1], "--reason", "speculation")
    assert done.returncode == 0 and "kept" in done.stdout
    assert http.get(f"/api/memory/{ids[1]}").json()["metadata"]["review"]["status"] == "rejected"
    rules = json.loads(cli(rdaemon, "rules", "--json").stdout)
    assert {r["rule"]: r for r in rules["rules"]}["stated-gotcha"]["rejected"] == 1
    bad = cli(rdaemon, "edit", ids[1])
    assert bad.returncode == 2 and "--content" in bad.stderr
    missing = cli(rdaemon, "accept", "no-such-memory")
    assert missing.returncode == 2 and "no-such-memory" in missing.stderr
    assert cli(rdaemon, "--status", "bogus").returncode == 2
