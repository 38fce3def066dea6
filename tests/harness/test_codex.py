"""kenning in the real Codex CLI (npm @openai/codex, pinned in tests/harness/clis.py), headless
against a scripted Responses server: `kenning connect codex` installs trusted hooks, the
memories reach the model's requests, tool steps (a failing one too) reach the observer, each
turn's end stores the conversation's episodes and no harness text, the hooks never block Codex
when the daemon is down, and uninstall gives back the config files byte for byte."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from kenning.hooks.connectors.codex import list_hooks
from bench.harnesses.daemon import free_port
from bench.harnesses.cli_runners import codex_dirs as setup_dirs, run_codex
from tests.harness.require import require_cli
from bench.harnesses.kenning_setup import KENNING, bare_env, connect
from tests.harness.kenning_checks import (
    assert_no_harness_text, episodes, observed, remember, request_messages, session_of, stored_texts,
)
from bench.harnesses.responses_server import ResponsesServer
from bench.harnesses.scripted import tool


USER_CONFIG = '# my codex settings\nmodel_reasoning_effort   =  "high"\n\n[tui]\nnotifications = true'  # no final newline
USER_HOOKS = '{\n  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}\n}\n'


@pytest.fixture(scope="module")
def codex_bin() -> Path:
    return require_cli("codex")


def test_memories_reach_codex_and_its_session_is_stored(codex_bin, daemon, tmp_path):
    home, work = setup_dirs(tmp_path, "proj-codex-flow")
    connect("codex", daemon=daemon, CODEX_HOME=str(home), KENNING_CODEX_BIN=str(codex_bin))
    rule = "Deploy the codex flow service with scripts/ship.sh, never with make deploy"
    fact = "The billing queue of the codex flow service drains through worker pool qpool-9"
    remember(daemon, rule, "proj-codex-flow", applies="project")  # opens sessions (issue 31)
    remember(daemon, fact, "proj-codex-flow", type="fact", confidence=0.5)  # not standing: only a prompt finds it

    with ResponsesServer() as server:
        server.script(tool("exec_command", cmd="ls /no/such/dir/kenning-test"),
                      tool("exec_command", cmd="echo fine"),
                      "The billing queue drains through qpool-9.")
        done = run_codex(codex_bin, home, work, server, "Which worker pool drains the billing queue?")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "hook: SessionStart Completed" in done.stderr  # trusted: Codex ran our hooks
    messages = request_messages(server.model_requests()[0].body)
    with_rule = [m for m in messages if rule in m]
    with_fact = [m for m in messages if fact in m]
    assert with_rule and with_fact, "the memories did not reach the model"
    assert not [m for m in with_fact if rule in m], "the prompt's memory came with session start, not the prompt"
    assert all('"developer"' in m for m in with_rule + with_fact)

    session = session_of(daemon, "proj-codex-flow", "codex")
    live = observed(daemon, session["session_key"])["live"]
    assert live["tool_calls"] == 2 and live["open_errors"] >= 1  # the failing `ls` is an error to the observer

    stored = episodes(daemon, session["session_key"])  # Stop stored the turn's episodes
    assert any("Which worker pool drains the billing queue?" in e and "drains through qpool-9" in e for e in stored)
    assert_no_harness_text(stored_texts(daemon, session["session_key"]))


def test_connect_trusts_the_hooks_and_uninstall_restores_bytes(codex_bin, daemon, tmp_path):
    home, work = setup_dirs(tmp_path, "proj-codex-install")
    (home / "config.toml").write_text(USER_CONFIG)
    (home / "hooks.json").write_text(USER_HOOKS)
    first = connect("codex", daemon=daemon, CODEX_HOME=str(home), KENNING_CODEX_BIN=str(codex_bin))
    assert "recorded 5 kenning hook(s) as trusted" in first.stdout
    installed = {p: (home / p).read_bytes() for p in ("config.toml", "hooks.json")}
    hooks = json.loads(installed["hooks.json"])["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == "notify-send done"  # the user's hook stays first
    command = hooks["SessionStart"][0]["hooks"][0]["command"]
    assert f"KENNING_PORT={daemon.port}" in command and f"KENNING_HOME={daemon.home}" in command
    listed = [h for h in list_hooks(str(codex_bin), home, work) if "kenning" in h["command"]]
    assert len(listed) == 5 and {h["trustStatus"] for h in listed} == {"trusted"}

    again = connect("codex", daemon=daemon, CODEX_HOME=str(home), KENNING_CODEX_BIN=str(codex_bin))
    assert "already" in again.stdout
    assert {p: (home / p).read_bytes() for p in installed} == installed  # idempotent

    connect("codex", "--uninstall", daemon=daemon, CODEX_HOME=str(home))
    assert (home / "config.toml").read_text() == USER_CONFIG
    assert (home / "hooks.json").read_text() == USER_HOOKS
    assert not list(home.glob("*.kenning-*"))


def test_codex_goes_on_when_the_daemon_is_down(codex_bin, tmp_path):
    home, work = setup_dirs(tmp_path, "proj-codex-down")
    kenning_home = tmp_path / "kenning-home"
    connect("codex", port=free_port(), KENNING_HOME=str(kenning_home), CODEX_HOME=str(home),
            KENNING_CODEX_BIN=str(codex_bin))
    with ResponsesServer() as server:
        server.script(tool("exec_command", cmd="echo hi"), "done")
        done = run_codex(codex_bin, home, work, server, "say hi")
    assert done.returncode == 0, done.stderr[-2000:]
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"):
        assert f"hook: {event} Completed" in done.stderr, event  # exit 0 within the hook's timeout
    assert len(server.model_requests()) == 2
    assert list((kenning_home / "spool").glob("*.json"))  # kept for the daemon's next start


def test_a_codex_session_ends_once_idle_after_its_last_turn(codex_bin, daemon_factory, tmp_path):
    """Codex has no session-end event: the daemon ends the session idle_end_minutes after its last
    turn, from the rollout (here 6 s, checked every second)."""
    home, work = setup_dirs(tmp_path, "proj-codex-idle")
    idle = daemon_factory("sessions:\n  idle_end_minutes: 0.1\n  idle_check_s: 1\n"
                          f"  transcript_roots:\n    - {home / 'sessions'}\n")
    connect("codex", daemon=idle, CODEX_HOME=str(home), KENNING_CODEX_BIN=str(codex_bin))
    with ResponsesServer() as server:
        server.script("Nothing to run.")
        assert run_codex(codex_bin, home, work, server, "Is the build green?").returncode == 0
    key = session_of(idle, "proj-codex-idle", "codex")["session_key"]
    deadline = time.monotonic() + 60
    while idle.get(f"/api/sessions/{key}").json()["session"]["status"] != "ended":
        assert time.monotonic() < deadline, "the idle Codex session was not ended"
        time.sleep(0.5)
    assert any("Is the build green?" in e for e in episodes(idle, key))


def test_doctor_checks_the_codex_hooks(codex_bin, daemon, tmp_path):
    home, work = setup_dirs(tmp_path, "proj-codex-doctor")
    env = {"CODEX_HOME": str(home), "KENNING_CODEX_BIN": str(codex_bin), "HOME": str(home.parent)}
    connect("codex", daemon=daemon, **env)

    def harnesses() -> list[dict]:
        done = subprocess.run([KENNING, "doctor", "--json"], capture_output=True, text=True, cwd=work, timeout=120,
                              env=bare_env(KENNING_HOME=str(daemon.home), KENNING_PORT=str(daemon.port), **env))
        return [h for h in json.loads(done.stdout)["harnesses"] if h["harness"] == "codex"]

    [check] = harnesses()
    assert check["trusted"] is True and check["problems"] == [] and check["reaches"] == [daemon.base_url]
    hooks_file = home / "hooks.json"
    hooks_file.write_text(hooks_file.read_text().replace("hook codex Stop", "hook codex Stop "))  # its hash changes
    [check] = harnesses()
    assert check["trusted"] is False and check["fix"] == "kenning connect codex --trust"
