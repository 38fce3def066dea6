"""A team server on PostgreSQL served by two daemons (issue 13, Show): Alice on one, Bob on the
other, one database. A team memory written by one is recalled by the other, a personal one is not,
and 8 concurrent writers across the two daemons lose nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from bench.harnesses.daemon import start_daemon

ADMIN = "pg-admin-secret"
WRITERS, PER_WRITER = 8, 25


@pytest.fixture(scope="module")
def two_daemons(pg_server, pg_template, tmp_path_factory):
    url = pg_server.create_database(f"team{uuid.uuid4().hex[:10]}", template=pg_template)
    config = f"auth_token: {ADMIN}\nstore:\n  backend: postgres\n  url: {url}\n"
    homes = [tmp_path_factory.mktemp(f"pg-team-{i}") for i in (1, 2)]
    for home in homes:
        (home / "config.yaml").write_text(config)
    tokens = {}
    for user in ("alice", "bob"):
        out = subprocess.run([sys.executable, "-m", "kenning", "token", "create", user, "--team", "core", "--json"],
                             env={**os.environ, "KENNING_HOME": str(homes[0]), "KENNING_PORT": "1"},
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        tokens[user] = json.loads(out.stdout)["token"]
    daemons = [start_daemon(home) for home in homes]
    yield daemons, tokens
    for daemon in daemons:
        daemon.stop()


def _client(daemon, secret: str) -> httpx.Client:
    return httpx.Client(base_url=daemon.base_url, timeout=120, headers={"Authorization": f"Bearer {secret}"})


def test_team_memory_crosses_daemons_and_a_personal_one_does_not(two_daemons):
    (first, second), tokens = two_daemons
    tag = uuid.uuid4().hex[:6]
    with _client(first, tokens["alice"]) as alice, _client(second, tokens["bob"]) as bob:
        team = alice.post("/api/memory/remember", json={
            "content": f"nebula{tag} team rule: schema changes ship behind a flag", "scope": "team"}).json()
        personal = alice.post("/api/memory/remember", json={
            "content": f"nebula{tag} personal: my flag experiments live in branch alice-{tag}",
            "scope": "personal"}).json()
        found = bob.post("/api/memory/recall", json={"query": f"nebula{tag} flag", "limit": 20}).json()["results"]
        ids = {h["id"] for h in found}
        assert team["id"] in ids and personal["id"] not in ids
        assert bob.get(f"/api/memory/{personal['id']}").status_code == 404
        assert bob.get(f"/api/memory/{team['id']}").json()["author"] == "alice"
        assert alice.post("/api/memory/recall", json={"query": f"nebula{tag} branch", "limit": 20}).json()[
            "results"][0]["id"] == personal["id"]


def test_eight_concurrent_writers_across_two_daemons_lose_nothing(two_daemons):
    (first, second), tokens = two_daemons
    project = f"pgload-{uuid.uuid4().hex[:6]}"

    def write(writer: int) -> list[str]:
        daemon, user = (first, "alice") if writer % 2 == 0 else (second, "bob")
        with _client(daemon, tokens[user]) as http:
            ids = []
            for i in range(PER_WRITER):
                r = http.post("/api/memory/remember", json={
                    "content": f"writer {writer} note {i} for {project}", "project": project, "scope": "team"})
                assert r.status_code == 200, r.text
                ids.append(r.json()["id"])
            return ids

    with ThreadPoolExecutor(WRITERS) as pool:
        acknowledged = [i for ids in pool.map(write, range(WRITERS)) for i in ids]
    assert len(set(acknowledged)) == WRITERS * PER_WRITER
    with httpx.Client(base_url=second.base_url, timeout=120, headers={"Authorization": f"Bearer {ADMIN}"}) as admin:
        page = admin.get("/api/memory", params={"project": project, "limit": 1000}).json()
    assert page["total"] == WRITERS * PER_WRITER and {m["id"] for m in page["items"]} == set(acknowledged)
    assert {m["author"] for m in page["items"]} == {"alice", "bob"}


# A's key as B may send it: blanks and invisible characters around it (issue 33, item 2)
PADDED = [lambda k: k + " ", lambda k: " " + k, lambda k: k + "\n", lambda k: "\t" + k, lambda k: k + "\r\n",
          lambda k: k + "\u00a0", lambda k: "\u2003" + k + "\u2003"]


def test_another_users_hooks_on_a_padded_session_key_are_refused(two_daemons):
    """Bob with Alice's session key plus a space, a newline, a tab, CR LF, a no-break or em space:
    the guard checks ownership on the key the engine stores (core.events.session_key), so every
    user-prompt-submit, hooks/feedback and hooks/replay is 403 and Alice's session is untouched.
    Before issue 33 each answered 200: Bob's prompt went into Alice's session, his ratings onto her memories."""
    (first, second), tokens = two_daemons
    key = f"alice-session-{uuid.uuid4().hex[:8]}"
    project = f"padded-{uuid.uuid4().hex[:6]}"
    with _client(first, tokens["alice"]) as alice, _client(second, tokens["bob"]) as bob, \
            httpx.Client(base_url=first.base_url, timeout=120, headers={"Authorization": f"Bearer {ADMIN}"}) as admin:
        personal = alice.post("/api/memory/remember", json={
            "content": f"{project}: my personal rule is to run the slow suite before every push",
            "type": "constraint", "scope": "personal", "project": project}).json()["id"]
        start = alice.post("/api/hooks/session-start", json={"session_key": key, "project": project})
        assert start.status_code == 200 and personal in start.json()["memory_ids"], start.text
        answers = []
        for n, pad in enumerate(PADDED):
            padded = pad(key)
            name = f"e-{uuid.uuid4().int % 10**20:020d}-{n}-abcdef.json"
            answers += [
                bob.post("/api/hooks/user-prompt-submit", json={"session_key": padded, "prompt": f"bob was here {n}",
                                                                "memory_feedback": {personal: -1.0}}),
                bob.post("/api/hooks/feedback", json={"session_key": padded, "memory_feedback": {personal: -1.0}}),
                bob.post("/api/hooks/replay", json={
                    "session_key": padded, "event": name, "path": "/api/hooks/user-prompt-submit",
                    "body": {"session_key": padded, "prompt": f"bob replayed {n}"}}),
            ]
        assert [r.status_code for r in answers] == [403] * len(answers), [(r.status_code, r.text) for r in answers]
        assert all("another user" in r.json()["error"] for r in answers)
        session = admin.get(f"/api/sessions/{key}").json()
        assert session["prompts"] == [] and session["session"]["owner"] == "alice"
        assert next(m for m in session["memories"] if m["memory_id"] == personal)["agent_feedback_count"] == 0
        again = alice.post("/api/hooks/session-start", json={"session_key": key + " ", "project": project})
        assert again.status_code == 200 and personal in again.json()["memory_ids"]  # Alice's own padded key is hers
