"""The new user's first week, end to end (issue 35): a wheel built from this tree installed into a fresh
virtual environment, a fresh HOME with Claude Code on PATH (a small executable named `claude`: init
detects agents by their command), then what a user does — and each fix of the issue asserted where the
user would see it:

- `kenning --version`; `kenning init` finds Claude Code by its command, with no ~/.claude yet;
- `kenning remember` inside a git repository without -p stores into that repository's project (the
  hooks' rule) and says so; --global says it is for every project;
- recall answers with a readable match (strong / likely) and says when nothing matches confidently;
- misspelt type → exit 2 naming the valid types; `sessions` / `predictor` alone answer; `stats` reads
  as words; `review rules` prints a line; no `<bool>` in help;
- daemon stopped: the session-start hook tells the user (systemMessage), `kenning doctor` is unhealthy
  (exit 2) and names the daemon; restarted, the spooled session is replayed and records no memory as
  shown to the agent (the hook's answer never reached it); doctor is no longer unhealthy;
- `kenning disconnect` removes the hooks and says how to remove the rest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from bench.harnesses.daemon import free_port
from tests.install.test_wheel import TORCH, _pip_find_links, _run, _source_copy, _uv


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """`kenning` from a wheel of this tree, in its own virtual environment."""
    tmp = tmp_path_factory.mktemp("wheel")
    uv = _uv()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KENNING_", "VIRTUAL_ENV", "PYTHON"))}
    links = [arg for f in _pip_find_links() for arg in ("--find-links", f)]
    source = _source_copy(tmp / "src")
    _run([uv, "build", "--wheel", "--out-dir", str(tmp / "dist"), str(source)], env)
    (wheel,) = (tmp / "dist").glob("kenning-*.whl")
    venv = tmp / "venv"
    _run([uv, "venv", "--python", sys.executable, str(venv)], env)
    _run([uv, "pip", "install", "--python", str(venv / "bin" / "python"), *links, TORCH, str(wheel)], env)
    return venv / "bin"


class User:
    """A fresh HOME and PATH: the wheel's bin, a fake `claude`, and the system's tools (git)."""

    def __init__(self, root: Path, bin_dir: Path) -> None:
        self.home = root / "home"
        self.home.mkdir()
        agents = root / "agents"
        agents.mkdir()
        claude = agents / "claude"
        claude.write_text("#!/bin/sh\necho 2.1.328 '(Claude Code)'\n")
        claude.chmod(0o755)
        self.port = free_port()
        base = {k: v for k, v in os.environ.items() if not k.startswith(("KENNING_", "VIRTUAL_ENV", "PYTHON"))}
        self.env = base | {"HOME": str(self.home), "PATH": f"{bin_dir}:{agents}:/usr/bin:/bin",
                           "KENNING_PORT": str(self.port), "COLUMNS": "200"}
        self.env.pop("XDG_CONFIG_HOME", None)

    def run(self, *args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(["kenning", *args], env=self.env, cwd=cwd or self.home, capture_output=True,
                              text=True, timeout=600, input=stdin)

    def ok(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        done = self.run(*args, cwd=cwd)
        assert done.returncode == 0, f"kenning {' '.join(args)} -> {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    (path / "src").mkdir()
    return path


def _until(check, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def test_the_first_week(installed, tmp_path):
    user = User(tmp_path, installed)
    assert user.ok("--version").stdout.strip().startswith("kenning ")

    init = user.ok("init").stdout
    assert "Claude Code:" in init and "kenning connect claude-code" in init, init  # found by its command
    assert "no agent found" not in init
    connected = user.ok("connect", "claude-code").stdout
    settings = user.home / ".claude" / "settings.json"
    # the installed hook: this install's Python running kenning/cli/entry.py (issue 36: not pip's console script)
    assert "cli/entry.py hook session-start" in settings.read_text(), connected
    user.ok("daemon", "start")
    try:
        repo = _repo(user.home / "work" / "acme-pay")
        stored = user.ok("remember", "Decision: refunds go through the Stripe Refunds API only", "-t", "decision",
                         cwd=repo / "src").stdout
        assert "in project acme-pay" in stored, stored
        everywhere = user.ok("remember", "Commit messages are in the imperative mood", "--global", cwd=repo).stdout
        assert "for every project" in everywhere, everywhere
        listed = json.loads(user.ok("list", "-p", "acme-pay", "--json").stdout)["items"]
        assert [m["content"] for m in listed] == ["Decision: refunds go through the Stripe Refunds API only"]

        found = user.ok("recall", "how do refunds work with Stripe?", cwd=repo).stdout
        assert "Stripe Refunds API" in found and ("strong" in found or "likely" in found), found
        nothing = user.ok("recall", "what is the office wifi password?", cwd=repo).stdout
        assert "no confident match" in nothing, nothing

        typo = user.run("list", "--type", "decison")
        assert typo.returncode == 2 and "decision" in typo.stderr and "constraint" in typo.stderr, typo.stderr
        internal = user.run("remember", "x", "-t", "task_calibration")
        assert internal.returncode == 2 and "fact, decision" in internal.stderr, internal.stderr
        assert user.ok("sessions").stdout.strip()
        assert "mode" in user.ok("predictor").stdout
        stats = user.ok("stats").stdout
        assert "memories" in stats and "acme-pay 1" in stats and "{" not in stats, stats
        assert user.ok("review", "rules").stdout.strip()
        for command in ([], ["remember"], ["recall"], ["sessions"], ["review"], ["disconnect"]):
            assert "<bool>" not in user.ok(*command, "--help").stdout, command

        user.ok("daemon", "stop")
        key = str(uuid.uuid4())
        start = {"session_id": key, "transcript_path": str(user.home / ".claude" / "projects" / f"{key}.jsonl"),
                 "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
        told = user.run("hook", "session-start", stdin=json.dumps(start))
        assert told.returncode == 0
        assert "daemon is not running" in json.loads(told.stdout)["systemMessage"], told.stdout
        doctor = user.run("doctor")
        assert doctor.returncode == 2, doctor.stdout + doctor.stderr
        assert "daemon" in doctor.stdout and "claude-code get no memories" in doctor.stdout, doctor.stdout

        user.ok("daemon", "start")

        def replayed():
            shown = user.run("sessions", "show", key, "--json")
            return json.loads(shown.stdout) if shown.returncode == 0 else None
        session = _until(replayed)
        assert session is not None, "the spooled session start was replayed"
        assert session["session"]["project"] == "acme-pay"
        assert session["memories"], "the replay chose memories for the session"
        assert not [m["memory_id"] for m in session["memories"] if m["was_injected"]]  # none reached the agent
        assert user.run("doctor").returncode != 2

        gone = user.ok("disconnect", cwd=repo).stdout
        assert "rm -rf" in gone and "uninstall" in gone, gone
        assert not settings.exists() or "cli/entry.py hook" not in settings.read_text()
    finally:
        user.run("daemon", "stop")
