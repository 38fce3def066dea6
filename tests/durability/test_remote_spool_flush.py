"""A laptop whose hooks talk to a daemon elsewhere (KENNING_URL) gets its spool to that daemon
(issue 26 follow-up). The "server" is a real daemon with its own home and its own HOME (it can
read none of the laptop's files); the hooks are real hook processes with the laptop's
KENNING_HOME. While the server is away the hooks spool the whole session; the first hook that
reaches it again hands the spool over (oldest first, a bounded number per hook), the session end
with its transcript read on the laptop; events sent twice store nothing twice."""

from __future__ import annotations

import http.server
import json
import os
import sqlite3
import subprocess
import sys
import threading
import uuid
from pathlib import Path

from kenning.core import spool
from bench.harnesses.daemon import free_port, start_daemon
from bench.harnesses.claude_format import payload, write_session
from tests.durability.test_hook_spool_daemon import CONFIG, TURNS, ended_with_facts, hook, run_session, wait_for


def laptop_env(laptop_home: Path, user_home: Path, url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    return {**env, "HOME": str(user_home), "KENNING_HOME": str(laptop_home), "KENNING_URL": url,
            "KENNING_HOOK_TIMEOUT": "5", **extra}


def _replayed(server_home: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{server_home / 'memories.db'}?mode=ro", uri=True)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM spool_replayed")}
    finally:
        conn.close()


def test_a_laptop_spool_reaches_the_remote_daemon_once(tmp_path):
    user_home, laptop_home = tmp_path / "laptop-user", tmp_path / "laptop-kenning"
    (user_home / ".claude" / "projects").mkdir(parents=True)
    repo = tmp_path / "billing"
    (repo / ".git").mkdir(parents=True)
    server_home = tmp_path / "server-kenning"
    away = f"http://127.0.0.1:{free_port()}"  # nobody listens: the server is away
    key = str(uuid.uuid4())
    transcript = write_session(user_home / ".claude" / "projects", str(repo), key, TURNS)
    run_session(laptop_env(laptop_home, user_home, away), key, repo, transcript)
    files = sorted((laptop_home / "spool").glob("e-*.json"))
    copies = {f.name: f.read_bytes() for f in files}
    assert len(files) == 4  # session start, two prompts, session end

    server = start_daemon(server_home, CONFIG, {"HOME": str(tmp_path / "server-user")})
    try:
        env = laptop_env(laptop_home, user_home, server.base_url)
        # the next hook (another session) reaches the server: at most 2 of the 4 go with it, oldest first
        assert hook("session-start", payload("session-start", str(uuid.uuid4()), str(repo), ""),
                    {**env, "KENNING_SPOOL_FLUSH_MAX": "2"}).returncode == 0
        left = sorted(p.name for p in (laptop_home / "spool").glob("e-*.json"))
        assert left == sorted(copies)[2:]
        assert _replayed(server_home) == set(sorted(copies)[:2])
        detail = server.client().get(f"/api/sessions/{key}").json()
        assert detail["session"]["status"] == "active" and [p["prompt"] for p in detail["prompts"]] == [TURNS[0][0]]

        assert hook("user-prompt-submit", payload("user-prompt-submit", key + "-next", str(repo), "",
                                                  prompt="what about the deploy?"), env).returncode == 0
        assert spool.stats(str(laptop_home))["depth"] == 0 and spool.stats(str(laptop_home))["dropped"] == 0
        first = wait_for(lambda: ended_with_facts(server.base_url, key))
        assert first["transcript"] and first["transcript"]["chars"] > 1000  # read on the laptop, sent with the event
        contents = " | ".join(m["content"] for m in first["created"])
        assert "helm" in contents and "squash" in contents, contents
        assert _replayed(server_home) == set(copies)

        for name, data in copies.items():  # the same events again (an answer lost on the way back)
            (laptop_home / "spool" / name).write_bytes(data)
        assert hook("user-prompt-submit", payload("user-prompt-submit", key + "-next", str(repo), "",
                                                  prompt="and the merge policy?"), env).returncode == 0
        assert spool.stats(str(laptop_home))["depth"] == 0
        second = wait_for(lambda: ended_with_facts(server.base_url, key))
        assert [p["prompt"] for p in second["prompts"]] == [p["prompt"] for p in first["prompts"]] == [t[0] for t in TURNS]
        assert sorted(m["id"] for m in second["created"]) == sorted(m["id"] for m in first["created"])
        assert second["transcript"]["sha256"] == first["transcript"]["sha256"]
        assert not list((server_home / "spool").glob("e-*.json"))  # nothing went through the server's own spool
    finally:
        server.stop()


def test_the_daemon_of_the_hooks_own_home_replays_its_spool_itself(tmp_path):
    home = tmp_path / "kenning"
    daemon = start_daemon(home, CONFIG, {"HOME": str(tmp_path / "user")})
    try:
        spooled = spool.append(str(home), {"path": "/api/hooks/user-prompt-submit", "harness": "claude-code",
                                           "body": {"session_key": "own-home", "prompt": "spooled here"}})
        with daemon.client() as http:
            answer = http.post("/api/hooks/replay", json={
                "session_key": "own-home", "event": spooled["name"], "path": "/api/hooks/user-prompt-submit",
                "body": {"session_key": "own-home", "prompt": "spooled here"}})
            assert answer.status_code == 200 and answer.json()["status"] in ("local", "duplicate")
            bad = http.post("/api/hooks/replay", json={
                "session_key": "own-home", "event": "e-1-2-x.json", "path": "/etc/passwd", "body": {}})
            assert bad.status_code == 400 and "path" in bad.json()["error"]
            mismatch = http.post("/api/hooks/replay", json={
                "session_key": "own-home", "event": "e-1-2-y.json", "path": "/api/hooks/user-prompt-submit",
                "body": {"session_key": "someone-else", "prompt": "x"}})
            assert mismatch.status_code == 400
            wait_for(lambda: [p["prompt"] for p in http.get("/api/sessions/own-home").json().get("prompts", [])]
                     == ["spooled here"])
    finally:
        daemon.stop()


class _Stalling(http.server.BaseHTTPRequestHandler):
    """A daemon that answers hooks but never answers a replay (a server stuck mid-flush)."""

    seen: list[str] = []

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append(self.path)
        if self.path == "/api/hooks/replay":
            threading.Event().wait(30)
            return
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_flush_never_holds_the_hook_past_its_deadline_and_loses_nothing(tmp_path):
    user_home, laptop_home = tmp_path / "user", tmp_path / "laptop"
    (user_home / ".claude" / "projects").mkdir(parents=True)
    away = f"http://127.0.0.1:{free_port()}"
    env = laptop_env(laptop_home, user_home, away, KENNING_HOOK_TIMEOUT="1")
    assert hook("user-prompt-submit", payload("user-prompt-submit", "k1", str(tmp_path), "", prompt="kept"),
                env).returncode == 0
    assert spool.stats(str(laptop_home))["depth"] == 1
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stalling)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        result = hook("user-prompt-submit", payload("user-prompt-submit", "k2", str(tmp_path), "", prompt="next"),
                      {**env, "KENNING_URL": url})  # hook() itself gives up after 60 s
        assert result.returncode == 0
        assert _Stalling.seen == ["/api/hooks/user-prompt-submit", "/api/hooks/replay"]
        assert spool.stats(str(laptop_home))["depth"] == 1  # not answered: kept for the next hook, not dropped
        assert spool.stats(str(laptop_home))["dropped"] == 0
    finally:
        server.shutdown()


class _FailsOne(http.server.BaseHTTPRequestHandler):
    """A remote daemon that takes every hook and every replayed event but one: the replay of the
    prompt 'poison' answers 500 each time (an event the server cannot apply)."""

    replayed: list[str] = []
    refused = 0

    def do_POST(self):  # noqa: N802
        data = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        status, body = 200, {"inject": "", "memory_ids": []}
        if self.path == "/api/hooks/replay":
            prompt = (data.get("body") or {}).get("prompt")
            if prompt == "poison":
                type(self).refused += 1
                status, body = 500, {"error": "internal error"}
            else:
                self.replayed.append(prompt)
                body = {"status": "done"}
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):  # quiet
        pass


def test_an_event_the_server_fails_with_5xx_is_set_aside_and_later_events_still_go(tmp_path):
    """Issue 33, item 5: the oldest spooled event answered 500 by the remote daemon blocked every
    later one (0 of 5 delivered over 5 hook runs). Now it is tried FAILED_TRIES times, then set aside
    in spool/held/ (kept, counted, named by `kenning doctor`) and the events after it go."""
    user_home, laptop_home = tmp_path / "user", tmp_path / "laptop"
    (user_home / ".claude" / "projects").mkdir(parents=True)
    away = laptop_env(laptop_home, user_home, f"http://127.0.0.1:{free_port()}", KENNING_HOOK_TIMEOUT="1")
    later = [f"later event {n}" for n in range(1, 5)]
    for n, prompt in enumerate(["poison", *later]):
        assert hook("user-prompt-submit", payload("user-prompt-submit", f"s{n}", str(tmp_path), "", prompt=prompt),
                    away).returncode == 0
    assert spool.stats(str(laptop_home))["depth"] == 5
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FailsOne)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = laptop_env(laptop_home, user_home, f"http://127.0.0.1:{server.server_address[1]}")
        for run in range(5):  # five hook runs reach the server, each flushing the spool
            assert hook("user-prompt-submit", payload("user-prompt-submit", f"run{run}", str(tmp_path), "",
                                                      prompt=f"run {run}"), env).returncode == 0
    finally:
        server.shutdown()
    assert _FailsOne.replayed == later  # every later event went, in order, once
    assert _FailsOne.refused == spool.FAILED_TRIES
    stats = spool.stats(str(laptop_home))
    assert stats["depth"] == 0 and stats["held"] == 1 and stats["dropped"] == 0
    held = list((laptop_home / "spool" / spool.HELD_DIR).glob("e-*.json"))
    assert len(held) == 1 and json.loads(held[0].read_text())["body"]["prompt"] == "poison"  # kept, not lost
    doctor = subprocess.run([str(Path(sys.executable).with_name("kenning")), "doctor", "--json"], env=env,
                            capture_output=True, text=True, timeout=300)
    problems = [p["message"] for p in json.loads(doctor.stdout)["problems"]]
    assert any("1 hook event(s) set aside" in m for m in problems), problems
