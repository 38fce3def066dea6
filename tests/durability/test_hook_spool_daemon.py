"""A session whose end the daemon missed is not lost (issue 26), on real daemons and real hook
processes with Claude Code-format transcripts and payloads.

- the daemon is down at SessionEnd: the hook exits 0 at once and spools the event; after a
  restart and the next hook the session has its transcript, episodes and facts;
- replaying the same events twice stores nothing twice;
- a session left `active` (its end never even spooled) is ended from its transcript at the next
  daemon start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from kenning.core import spool
from bench.harnesses.daemon import start_daemon
from bench.harnesses.claude_format import payload, write_session

HOOK = [sys.executable, "-m", "kenning.hooks"]
TURNS = [
    ("Where do we deploy the billing service?",
     "We decided to deploy billing with helm only; the old kubectl scripts are gone."),
    ("And how do we merge pull requests?",
     "From now on we always squash merge pull requests into main."),
]
CONFIG = "sessions:\n  latency_budget_ms: 20000\n"


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    home = tmp_path / "user"
    (home / ".claude" / "projects").mkdir(parents=True)
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "billing"
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return path


def hook(event: str, body: dict, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(HOOK + [event], input=json.dumps(body).encode(), capture_output=True, env=env, timeout=60)


def hook_env(daemon_home: Path, port: int, user_home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(user_home), "KENNING_HOME": str(daemon_home), "KENNING_PORT": str(port),
            "KENNING_HOOK_TIMEOUT": "5"}


def wait_for(check, timeout: float = 120.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError("condition not met in time")


def ended_with_facts(base_url: str, key: str):
    detail = httpx.get(f"{base_url}/api/sessions/{key}", timeout=30)
    if detail.status_code != 200:
        return None
    data = detail.json()
    job = data.get("summary_job") or {}
    if data["session"]["status"] != "ended" or job.get("status") != "done":
        return None
    return data


def run_session(env: dict[str, str], key: str, repo: Path, transcript: Path, *, end: bool = True) -> None:
    for event, extra in (("session-start", {}), ("user-prompt-submit", {"prompt": TURNS[0][0]}),
                         ("user-prompt-submit", {"prompt": TURNS[1][0]})):
        assert hook(event, payload(event, key, str(repo), str(transcript), **extra), env).returncode == 0
    if end:
        assert hook("session-end", payload("session-end", key, str(repo), str(transcript)), env).returncode == 0


def test_a_session_ended_while_the_daemon_was_down_is_recorded_after_restart(tmp_path, user_home, repo):
    daemon_home = tmp_path / "kenning"
    extra = {"HOME": str(user_home)}
    daemon = start_daemon(daemon_home, CONFIG, extra)
    key = str(uuid.uuid4())
    transcript = write_session(user_home / ".claude" / "projects", str(repo), key, TURNS)
    try:
        run_session(hook_env(daemon_home, daemon.port, user_home), key, repo, transcript, end=False)
        daemon.stop()  # the user closes the laptop lid; the daemon is gone when Claude Code ends
        ended = hook("session-end", payload("session-end", key, str(repo), str(transcript)),
                     hook_env(daemon_home, daemon.port, user_home))
        assert ended.returncode == 0 and ended.stdout == b""
        assert spool.stats(str(daemon_home))["depth"] == 1
        daemon = start_daemon(daemon_home, CONFIG, extra)
        other = str(uuid.uuid4())  # the next session's first hook reaches the new daemon
        assert hook("session-start", payload("session-start", other, str(repo), "/nonexistent.jsonl"),
                    hook_env(daemon_home, daemon.port, user_home)).returncode == 0
        data = wait_for(lambda: ended_with_facts(daemon.base_url, key))
        assert data["transcript"] and data["transcript"]["chars"] > 1000
        contents = " | ".join(m["content"] for m in data["created"])
        assert any(m["source"] == "session-episode" for m in data["created"]), contents
        assert "helm" in contents and "squash" in contents, contents
        assert spool.stats(str(daemon_home))["depth"] == 0
    finally:
        daemon.stop()


def migrated_home_with_daemon_down(tmp_path: Path, user_home: Path) -> tuple[Path, dict[str, str], int]:
    """A home a daemon has set up (and the port it used), that daemon stopped: hooks find nobody."""
    daemon_home = tmp_path / "kenning"
    extra = {"HOME": str(user_home)}
    daemon = start_daemon(daemon_home, CONFIG, extra)
    daemon.stop()
    return daemon_home, extra, daemon.port


def test_replaying_the_same_session_twice_stores_nothing_twice(tmp_path, user_home, repo):
    daemon_home, extra, port = migrated_home_with_daemon_down(tmp_path, user_home)
    key = str(uuid.uuid4())
    transcript = write_session(user_home / ".claude" / "projects", str(repo), key, TURNS)
    env = hook_env(daemon_home, port, user_home)
    run_session(env, key, repo, transcript)  # the whole session while the daemon is down
    files = sorted((daemon_home / "spool").glob("e-*.json"))
    copies = {f.name: f.read_bytes() for f in files}
    assert len(files) == 4
    doctor = subprocess.run([sys.executable, "-m", "kenning", "doctor", "--json"], capture_output=True, text=True,
                            env=env, timeout=300)  # the daemon is down: the doctor reads the home itself
    connector = json.loads(doctor.stdout)["domains"]["connector"]
    assert connector["metrics"]["spool"]["depth"] == 4 and connector["metrics"]["spool"]["oldest_at"]
    assert "4 hook event(s) waiting in the spool" in json.dumps(connector["problems"])
    daemon = start_daemon(daemon_home, CONFIG, extra)
    try:
        first = wait_for(lambda: ended_with_facts(daemon.base_url, key))
        for name, data in copies.items():  # the same events spooled again (a second replay)
            (daemon_home / "spool" / name).write_bytes(data)
        os.chmod(daemon_home / "spool", 0o700)
        assert hook("session-start", payload("session-start", str(uuid.uuid4()), str(repo), ""), env | {
            "KENNING_PORT": str(daemon.port)}).returncode == 0
        wait_for(lambda: spool.stats(str(daemon_home))["depth"] == 0)
        time.sleep(3)  # a second summary, if one were queued, would run now
        second = wait_for(lambda: ended_with_facts(daemon.base_url, key))
        assert len(second["prompts"]) == len(first["prompts"]) == 2
        assert sorted(m["id"] for m in second["created"]) == sorted(m["id"] for m in first["created"])
        assert second["transcript"]["sha256"] == first["transcript"]["sha256"]
        health = httpx.get(f"{daemon.base_url}/api/diagnostics", timeout=120).json()["domains"]["connector"]
        assert health["metrics"]["spool"]["depth"] == 0 and "spool 0 waiting" in health["summary"]
    finally:
        daemon.stop()


def test_a_session_left_active_is_ended_from_its_transcript_at_daemon_start(tmp_path, user_home, repo):
    daemon_home = tmp_path / "kenning"
    extra = {"HOME": str(user_home)}
    config = CONFIG + "  stale_after_minutes: 0\n"
    daemon = start_daemon(daemon_home, config, extra)
    key = str(uuid.uuid4())
    transcript = write_session(user_home / ".claude" / "projects", str(repo), key, TURNS)
    try:
        run_session(hook_env(daemon_home, daemon.port, user_home), key, repo, transcript, end=False)
        daemon.proc.kill()  # killed: the SessionEnd hook never ran at all (the machine went down)
        daemon.proc.wait()
        daemon = start_daemon(daemon_home, config, extra)
        data = wait_for(lambda: ended_with_facts(daemon.base_url, key))
        assert data["transcript"]["chars"] > 1000
        assert "squash" in " | ".join(m["content"] for m in data["created"])
    finally:
        daemon.stop()


def test_a_full_spool_drops_the_oldest_with_a_counted_warning(tmp_path, user_home, repo):
    daemon_home, extra, port = migrated_home_with_daemon_down(tmp_path, user_home)
    key = str(uuid.uuid4())
    env = hook_env(daemon_home, port, user_home) | {"KENNING_SPOOL_MAX_EVENTS": "3"}
    for n in range(5):
        body = payload("user-prompt-submit", key, str(repo), "", prompt=f"prompt number {n}")
        result = hook("user-prompt-submit", body, env)
        assert result.returncode == 0 and result.stdout == b"" and result.stderr == b""
    info = spool.stats(str(daemon_home))
    assert (info["depth"], info["dropped"], info["drop_reasons"]) == (3, 2, {"cap": 2})
    daemon = start_daemon(daemon_home, CONFIG, extra)
    try:
        data = wait_for(lambda: (r := httpx.get(f"{daemon.base_url}/api/sessions/{key}", timeout=30)).status_code == 200
                        and len(r.json()["prompts"]) == 3 and r.json())
        assert [p["prompt"] for p in data["prompts"]] == [f"prompt number {n}" for n in (2, 3, 4)]
        errors = httpx.get(f"{daemon.base_url}/api/analytics/errors", params={"stage": "hooks"}, timeout=30).json()
        assert "2 oldest event(s) dropped" in json.dumps(errors)
    finally:
        daemon.stop()
