"""Teams (issue 13 item 3) on a real daemon with real user tokens: scopes personal | project | team |
org hold on every route a user token reaches (recall, list, get, export, edit/forget, hooks
injection, MCP), authors are recorded, tokens are stored hashed, and a single-user daemon is as
before (the `daemon` fixture has no tokens)."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import httpx
import pytest

from bench.harnesses.daemon import start_daemon

ADMIN = "admin-secret-for-tests"
PROJECT = "teamproj"


def cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "KENNING_HOME": str(home), "KENNING_PORT": "1"}
    return subprocess.run([sys.executable, "-m", "kenning", *args], env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    home = tmp_path_factory.mktemp("team-server")
    tokens = {}
    for user, team in (("alice", "core"), ("bob", "core"), ("carol", "other")):
        out = cli(home, "token", "create", user, "--team", team, "--json")
        assert out.returncode == 0, out.stderr
        tokens[user] = json.loads(out.stdout)
    proc = start_daemon(home, f"auth_token: {ADMIN}\n")
    proc.tokens = tokens
    yield proc
    proc.stop()


def as_user(server, user: str) -> httpx.Client:
    secret = ADMIN if user == "admin" else server.tokens[user]["token"]
    return httpx.Client(base_url=server.base_url, timeout=120, headers={"Authorization": f"Bearer {secret}"})


@pytest.fixture(scope="module")
def written(server):
    """Alice writes one memory per scope, Carol (another team) a team memory."""
    tag = uuid.uuid4().hex[:6]
    texts = {scope: f"zephyr{tag} {scope} note: the {scope} cache warms at {i} am"
             for i, scope in enumerate(("personal", "project", "team", "org"), start=1)}
    ids = {}
    with as_user(server, "alice") as alice:
        for scope, text in texts.items():
            r = alice.post("/api/memory/remember", json={"content": text, "scope": scope, "project": PROJECT,
                                                         "applies": "project"})  # may open a session (issue 31)
            assert r.status_code == 200, r.text
            ids[scope] = r.json()["id"]
    with as_user(server, "carol") as carol:
        text = f"zephyr{tag} other-team note: carol's deploy window is friday"
        ids["other"] = carol.post("/api/memory/remember", json={"content": text, "scope": "team", "project": PROJECT,
                                                                "applies": "project"}).json()["id"]
        texts["other"] = text
    return {"tag": tag, "ids": ids, "texts": texts}


SEES = {"alice": {"personal", "project", "team", "org"}, "bob": {"project", "team", "org"},
        "carol": {"org", "other"}, "admin": {"personal", "project", "team", "org", "other"}}


@pytest.mark.parametrize("user", sorted(SEES))
def test_each_user_sees_exactly_their_scopes_through_every_read_route(server, written, user):
    ids, tag = written["ids"], written["tag"]
    mine = {ids[s] for s in SEES[user]}
    hidden = set(ids.values()) - mine
    with as_user(server, user) as http:
        listed = {m["id"] for m in http.get("/api/memory", params={"project": PROJECT, "limit": 1000}).json()["items"]}
        assert mine <= listed and not hidden & listed
        recalled = {h["id"] for h in http.post("/api/memory/recall", json={
            "query": f"zephyr{tag} cache warms note", "limit": 50}).json()["results"]}
        assert not hidden & recalled and mine & recalled
        for memory_id in hidden:
            assert http.get(f"/api/memory/{memory_id}").status_code == 404
            assert http.patch(f"/api/memory/{memory_id}", json={"importance": 0.9}).status_code == 404
            assert http.delete(f"/api/memory/{memory_id}").status_code == 404
        for memory_id in mine:
            assert http.get(f"/api/memory/{memory_id}").status_code == 200
        for fmt in ("json", "jsonl", "markdown", "claude-md"):
            text = http.get("/api/export", params={"format": fmt, "project": PROJECT}).text
            assert all(written["texts"][s] in text for s in SEES[user])
            assert not any(memory_id in text for memory_id in hidden)
            assert not any(written["texts"][s] in text for s in set(ids) - SEES[user])
        key = f"team-{user}-{uuid.uuid4().hex[:8]}"
        start = http.post("/api/hooks/session-start", json={
            "session_key": key, "project": PROJECT, "context": f"zephyr{tag} cache warms"}).json()
        prompt = http.post("/api/hooks/user-prompt-submit", json={
            "session_key": key, "prompt": f"when does the zephyr{tag} cache warm?"}).json()
        offered = set(start["memory_ids"]) | set(prompt["memory_ids"])
        assert offered and not hidden & offered, (start, prompt)
        assert not any(written["texts"][s] in start["inject"] + prompt["inject"] for s in set(ids) - SEES[user])


def test_a_session_belongs_to_its_user_and_another_users_hooks_are_refused(server, written):
    """Issue 26: Bob reusing Alice's session key gets 403 on every hook and stores nothing — no
    prompt appended, no rating of Alice's personal memory, no end — and Alice's session goes on."""
    key = f"shared-key-{uuid.uuid4().hex[:8]}"
    personal = written["ids"]["personal"]
    body = {"session_key": key, "project": PROJECT, "context": f"zephyr{written['tag']} personal cache note"}
    with as_user(server, "alice") as alice, as_user(server, "bob") as bob, as_user(server, "admin") as admin:
        first = alice.post("/api/hooks/session-start", json=body).json()
        assert personal in first["memory_ids"], first
        before = admin.get(f"/api/sessions/{key}").json()
        refused = [
            bob.post("/api/hooks/session-start", json=body),
            bob.post("/api/hooks/user-prompt-submit", json={"session_key": key, "prompt": "bob was here",
                                                            "memory_feedback": {personal: 1.0}}),
            bob.post("/api/hooks/feedback", json={"session_key": key, "memory_feedback": {personal: 1.0}}),
            bob.post("/api/feedback", json={"session_key": key, "scores": {personal: 1.0}}),
            bob.post("/api/hooks/checkpoint", json={"session_key": key, "context": "bob's checkpoint"}),
            bob.post("/api/hooks/post-tool-use", json={"session_key": key, "tool_name": "Bash",
                                                       "tool_input": {"command": "ls"}, "tool_response": "x"}),
            bob.post("/api/hooks/session-end", json={"session_key": key, "transcript": "bob's transcript"}),
        ]
        assert [r.status_code for r in refused] == [403] * len(refused), [r.text for r in refused]
        # the first four are open to user tokens and refused as another user's session; the rest
        # are closed to user tokens altogether (issue 13)
        assert all("another user" in r.json()["error"] for r in refused[:4]), [r.text for r in refused]
        assert personal not in json.dumps([r.text for r in refused])
        # an id-only rating (MCP) finds no session of Bob's that showed the memory
        assert bob.post("/api/feedback", json={"scores": {personal: 1.0}}).json()["applied"] == 0
        after = admin.get(f"/api/sessions/{key}").json()
        assert after["prompts"] == before["prompts"] == [] and after["checkpoints"] == []
        assert after["session"]["status"] == "active" and after["transcript"] is None
        row = next(m for m in after["memories"] if m["memory_id"] == personal)
        assert row["agent_feedback_count"] == 0
        assert after["session"]["owner"] == "alice"
        # Alice goes on; her rating of a memory she was shown counts, one she was not shown does not
        assert alice.post("/api/hooks/user-prompt-submit", json={"session_key": key, "prompt": "and then?"}).status_code == 200
        not_shown = next((m["memory_id"] for m in after["memories"] if not m["was_injected"]), None)
        rated = alice.post("/api/hooks/feedback", json={"session_key": key, "memory_feedback": {
            personal: 0.9, **({not_shown: 0.9} if not_shown else {})}}).json()
        assert rated["applied"] == 1


def test_authors_are_recorded_and_history_names_the_user(server, written):
    ids = written["ids"]
    with as_user(server, "bob") as bob:
        team = bob.get(f"/api/memory/{ids['team']}").json()
        assert (team["author"], team["team"]) == ("alice", "core")
        assert bob.patch(f"/api/memory/{ids['project']}", json={"importance": 0.7}).status_code == 200
        history = bob.get(f"/api/memory/{ids['project']}").json()["history"]
        assert [h["actor"] for h in history] == ["alice", "bob"]
        purge = bob.delete(f"/api/memory/{ids['team']}", params={"purge": "true"})
        assert purge.status_code == 400 and "only its author (alice)" in purge.json()["error"]
    with as_user(server, "admin") as admin:
        assert admin.get(f"/api/memory/{ids['other']}").json()["author"] == "carol"


def test_a_private_duplicate_is_not_a_duplicate_for_someone_else(server, written):
    text = written["texts"]["personal"]
    with as_user(server, "bob") as bob:
        r = bob.post("/api/memory/remember", json={"content": text, "scope": "personal", "project": PROJECT}).json()
        assert r["deduped"] is False and r["id"] != written["ids"]["personal"]
        assert bob.get(f"/api/memory/{r['id']}").json()["author"] == "bob"
        again = bob.post("/api/memory/remember", json={"content": text, "scope": "personal", "project": PROJECT})
        assert again.json() == {"id": r["id"], "deduped": True}
        taken = bob.post("/api/memory/remember", json={"content": "anything new", "id": written["ids"]["personal"]})
        assert taken.status_code == 409
        shared = bob.post("/api/memory/remember", json={"content": written["texts"]["team"], "scope": "team",
                                                        "project": PROJECT}).json()
        assert shared == {"id": written["ids"]["team"], "deduped": True}  # the team's copy is his too


def test_bearer_rules_on_a_team_server(server):
    with httpx.Client(base_url=server.base_url, timeout=60) as anon:
        assert anon.get("/api/memory").status_code == 401  # tokens exist: no bearer, no answer
        assert anon.get("/api/health").json() == {"status": "ok"}
        assert anon.get("/api/memory", headers={"Authorization": "Bearer kn_wrong"}).status_code == 401
    with as_user(server, "bob") as bob:
        for path in ("/api/diagnostics", "/api/sessions", "/api/stats", "/api/graph/entities"):
            r = bob.get(path)
            assert r.status_code == 403 and "not open to user tokens" in r.json()["error"], path
    with as_user(server, "admin") as admin:
        assert admin.get("/api/stats").status_code == 200


def test_tokens_are_stored_hashed_listed_without_secret_and_revocable(server):
    listed = cli(server.home, "token", "list", "--json")
    assert listed.returncode == 0
    rows = json.loads(listed.stdout)
    assert {r["user"] for r in rows} >= {"alice", "bob", "carol"} and "token" not in rows[0]
    created = json.loads(cli(server.home, "token", "create", "dave", "--json").stdout)
    raw = b"".join(p.read_bytes() for p in server.home.glob("memories.db*"))
    for token in (*server.tokens.values(), created):
        assert token["token"].encode() not in raw
    with httpx.Client(base_url=server.base_url, timeout=60,
                      headers={"Authorization": f"Bearer {created['token']}"}) as dave:
        assert dave.get("/api/memory").status_code == 200
        out = cli(server.home, "token", "revoke", "dave")
        assert out.returncode == 0 and created["id"] in out.stdout
        assert dave.get("/api/memory").status_code == 401
    assert cli(server.home, "token", "revoke", "nobody").returncode == 2
    bad = cli(server.home, "token", "create", "bad name")
    assert bad.returncode == 2 and "user name" in bad.stderr
    own = cli(server.home, "token", "create", getpass.getuser())
    assert own.returncode == 2 and "server's own user" in own.stderr


def _mcp_search(env: dict[str, str], query: str, memory_id: str) -> tuple[list, bool]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def go():
        params = StdioServerParameters(command=str(Path(sys.executable).with_name("kenning")), args=["mcp"], env=env)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                found = await session.call_tool("memory_search", {"query": query, "limit": 20})
                got = await session.call_tool("memory_get", {"memory_id": memory_id})
                assert not found.is_error, found.content
                data = found.structured_content or {"result": json.loads(found.content[0].text)}
                return data.get("result", data), got.is_error

    return anyio.run(go)


def test_mcp_with_a_user_token_never_returns_someone_elses_personal_memory(server, written):
    env = {**os.environ, **server.env, "KENNING_TOKEN": server.tokens["bob"]["token"]}
    with ThreadPoolExecutor(1) as pool:  # its own event loop, whatever the test session runs
        found, get_failed = pool.submit(_mcp_search, env, f"zephyr{written['tag']} personal cache",
                                        written["ids"]["personal"]).result(timeout=300)
    ids = {hit["id"] for hit in found}
    assert written["ids"]["team"] in ids and written["ids"]["personal"] not in ids
    assert get_failed


def test_single_user_daemon_records_the_os_user_and_needs_no_token(daemon):
    with daemon.client() as http:
        stored = http.post("/api/memory/remember", json={"content": f"solo note {uuid.uuid4().hex}"}).json()
        memory = http.get(f"/api/memory/{stored['id']}").json()
    assert memory["author"] == getpass.getuser() and memory["team"] is None


def test_team_settings_are_validated_and_the_token_can_come_from_the_environment(tmp_path):
    from kenning.core.config import load_settings
    from kenning.core.errors import ConfigError

    (tmp_path / "config.yaml").write_text("team:\n  url: ftp://server\n")
    with pytest.raises(ConfigError, match="team.url"):
        load_settings(environ={"KENNING_HOME": str(tmp_path)})
    (tmp_path / "config.yaml").write_text("team:\n  url: https://kenning.example:3850\n")
    loaded = load_settings(environ={"KENNING_HOME": str(tmp_path), "KENNING_TEAM_TOKEN": "kn_env"})
    assert (loaded.team.url, loaded.team.token) == ("https://kenning.example:3850", "kn_env")


def test_a_spooled_event_replayed_on_a_team_server_keeps_its_owner_and_its_rules(server):
    """A laptop flushing its spool to a team server (/api/hooks/replay, issue 26 follow-up): the
    event is applied as the caller, once; another user's session and the hooks closed to user
    tokens stay refused; the same event name from another user is that user's own event."""
    key, mine = f"spooled-{uuid.uuid4().hex[:8]}", f"bobs-{uuid.uuid4().hex[:8]}"
    name = f"e-{uuid.uuid4().int % 10**20:020d}-1-abcdef.json"

    def event(session: str, path: str, body: dict) -> dict:
        return {"session_key": session, "event": name, "path": path, "body": {"session_key": session, **body}}

    prompt = event(key, "/api/hooks/user-prompt-submit", {"prompt": "spooled on the laptop"})
    with as_user(server, "alice") as alice, as_user(server, "bob") as bob, as_user(server, "admin") as admin:
        assert alice.post("/api/hooks/session-start", json={"session_key": key, "project": PROJECT}).status_code == 200
        assert alice.post("/api/hooks/replay", json=prompt).json() == {"status": "done"}
        assert alice.post("/api/hooks/replay", json=prompt).json() == {"status": "duplicate"}
        refused = [bob.post("/api/hooks/replay", json=prompt),
                   bob.post("/api/hooks/replay", json=event(mine, "/api/hooks/session-end", {"transcript": "x"}))]
        assert [r.status_code for r in refused] == [403, 403], [r.text for r in refused]
        assert "another user" in refused[0].json()["error"]
        assert bob.post("/api/hooks/session-start", json={"session_key": mine, "project": PROJECT}).status_code == 200
        own = bob.post("/api/hooks/replay", json=event(mine, "/api/hooks/user-prompt-submit", {"prompt": "bob's own"}))
        assert own.json() == {"status": "done"}, own.text  # the same name from Bob is not Alice's event
        assert [p["prompt"] for p in admin.get(f"/api/sessions/{key}").json()["prompts"]] == ["spooled on the laptop"]
        assert [p["prompt"] for p in admin.get(f"/api/sessions/{mine}").json()["prompts"]] == ["bob's own"]


def test_laptop_keeps_personal_memories_and_sends_team_ones_to_the_server(server, written, tmp_path):
    """Two real daemons: a laptop (SQLite, `team: {url, token}` as Alice) and the team server.
    Runs last in this module: it stops the server to show what happens offline."""
    tag = uuid.uuid4().hex[:6]
    laptop = start_daemon(tmp_path / "laptop", f"team:\n  url: {server.base_url}\n  token: "
                                               f"{server.tokens['alice']['token']}\n")
    try:
        with laptop.client() as http, as_user(server, "bob") as bob, as_user(server, "admin") as admin:
            mine = http.post("/api/memory/remember", json={
                "content": f"quasar{tag} laptop-only: my scratch branch is wip-{tag}", "scope": "personal"}).json()
            shared = http.post("/api/memory/remember", json={
                "content": f"quasar{tag} team: the release train leaves on tuesdays", "scope": "team"}).json()
            batch = http.post("/api/memory/batch", json={"memories": [
                {"content": f"quasar{tag} org: every service exposes /healthz", "scope": "org"},
                {"content": f"quasar{tag} local project note: run tox before pushing"}]}).json()["results"]
            on_server = bob.get(f"/api/memory/{shared['id']}").json()
            assert (on_server["author"], on_server["scope"]) == ("alice", "team")
            assert bob.get(f"/api/memory/{batch[0]['id']}").json()["scope"] == "org"
            assert admin.get(f"/api/memory/{mine['id']}").status_code == 404  # never left the laptop
            assert admin.get(f"/api/memory/{batch[1]['id']}").status_code == 404
            local_ids = {m["id"] for m in http.get("/api/memory", params={"limit": 1000}).json()["items"]}
            assert {mine["id"], batch[1]["id"]} <= local_ids and not {shared["id"], batch[0]["id"]} & local_ids

            answer = http.post("/api/memory/recall", json={"query": f"quasar{tag} release train healthz scratch",
                                                           "limit": 10}).json()
            assert answer["team"] == "ok"
            origins = {h["id"]: h["origin"] for h in answer["results"]}
            assert origins.get(mine["id"]) == "local" and origins.get(shared["id"]) == "team"
            assert written["ids"]["other"] not in origins  # Carol's team is not Alice's

            server.stop()  # offline: recall answers from the laptop, a team write is refused, nothing half-stored
            offline = http.post("/api/memory/recall", json={"query": f"quasar{tag} scratch branch"}).json()
            assert "did not answer" in offline["team"] and mine["id"] in {h["id"] for h in offline["results"]}
            refused = http.post("/api/memory/remember", json={"content": f"quasar{tag} team: offline", "scope": "team"})
            assert refused.status_code == 503 and "nothing was stored" in refused.json()["error"]
    finally:
        laptop.stop()
