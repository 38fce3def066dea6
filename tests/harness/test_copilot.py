"""kenning in the real GitHub Copilot CLI (npm @github/copilot, pinned in tests/harness/clis.py),
headless and offline against a scripted chat-completions server: `kenning connect copilot` installs
user-level hooks in ~/.copilot/settings.json, the memories reach the model's request at session
start and at the prompt, tool steps (a failing shell command, a failing `view`) reach the observer, the
agent's rating of a memory reaches the session (agentStop),
session end stores the conversation read from Copilot CLI's events.jsonl (once Copilot CLI has
finished writing it) with its project and no harness text, Copilot CLI goes on when the daemon is down, `kenning doctor` checks the hooks, and
uninstall gives the settings back byte for byte, never touching the repository's .github/hooks."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest

from bench.harnesses.daemon import free_port
from bench.harnesses.chat_server import ChatServer
from bench.harnesses.cli_runners import copilot_dirs as setup_home, run_copilot
from tests.harness.require import require_cli
from bench.harnesses.kenning_setup import KENNING, bare_env, connect
from tests.harness.kenning_checks import (assert_no_harness_text, episodes, observed, remember, session_of, stored_texts,
                                          summarized)
from bench.harnesses.scripted import tool

FAILS_ONCE = "test -e fixed.flag || { touch fixed.flag; echo 'make: *** [test] Error 1' >&2; exit 2; }"
EVENTS = {"sessionStart", "userPromptSubmitted", "postToolUse", "postToolUseFailure", "errorOccurred", "agentStop",
          "preCompact", "sessionEnd"}


@pytest.fixture(scope="module")
def copilot_bin() -> Path:
    return require_cli("copilot")


def messages(body: dict) -> list[dict]:
    return [m for m in body["messages"] if isinstance(m, dict)]


def test_memories_reach_copilot_and_its_session_is_stored(copilot_bin, daemon_factory, tmp_path):
    home, work = setup_home(tmp_path, "proj-copilot-flow")
    # the daemon's HOME is not this Copilot CLI's: its session-state folder is named as a transcript root
    daemon = daemon_factory(f"sessions:\n  transcript_roots:\n    - {home / '.copilot' / 'session-state'}\n")
    connect("copilot", daemon=daemon, HOME=str(home))
    rule = "Deploy the copilot flow service with scripts/ship.sh, never with make deploy"
    fact = "The billing queue of the copilot flow service drains through worker pool cpool-7"
    pinned = httpx.post(f"{daemon.base_url}/api/memory/remember", timeout=60, json={
        "content": rule, "type": "decision", "project": "proj-copilot-flow", "confidence": 1.0, "pinned": True})
    assert pinned.status_code == 200, pinned.text  # the user's pinned rule: it opens every session of the project
    fact_id = remember(daemon, fact, "proj-copilot-flow", type="fact", confidence=0.5)
    question = "Which worker pool drains the billing queue?"

    with ChatServer() as server:
        server.script(tool("view", path=str(work / "missing.txt")),
                      tool("bash", command=FAILS_ONCE, description="run the tests"),
                      tool("bash", command=FAILS_ONCE, description="run the tests again"),
                      "The billing queue drains through cpool-7.\n"
                      f'<memory-feedback>{{"{fact_id}": 0.9}}</memory-feedback>')  # agentStop reads it
        done = run_copilot(copilot_bin, home, work, server, question)
    assert done.returncode == 0, done.stderr[-2000:]
    first = messages(server.model_requests()[0].body)
    users = [m for m in first if m["role"] == "user"]
    typed = [m for m in users if question in str(m["content"])]
    assert len(typed) == 1
    # session start's block is a user message of its own; the prompt's is appended to the typed turn
    assert [m for m in users if rule in str(m["content"]) and question not in str(m["content"])], \
        "session start's memories did not reach the model"
    assert fact in str(typed[0]["content"]), "the prompt's memories did not reach the model"

    session = session_of(daemon, "proj-copilot-flow", "copilot")  # recorded with its project
    seen = observed(daemon, session["session_key"])
    assert seen["finished"]["tool_calls"] == 3  # the failed view and both test runs; session end finished it
    assert [s for s in seen["signals"] if s["signal_class"] == "error_retry"]  # the failure, then the fix

    # Copilot CLI writes events.jsonl late (at sessionEnd it may hold only its first KB): the summary
    # job reads it again once it ends with session.shutdown (sessions.late_transcript)
    stored = episodes(daemon, session["session_key"])
    assert any(question in e and "drains through cpool-7" in e for e in stored)
    detail = summarized(daemon, session["session_key"])  # the job's extraction ends after the episodes are stored
    assert detail["session"]["status"] == "ended" and detail["summary_job"]["status"] == "done"
    assert_no_harness_text(stored_texts(daemon, session["session_key"]))
    events = home / ".copilot" / "session-state" / session["session_key"] / "events.jsonl"
    assert json.loads(events.read_text().splitlines()[-1])["type"] == "session.shutdown"
    assert detail["transcript"]["chars"] == len(events.read_text())  # the finished file, not what the hook saw
    [rated] = [m for m in detail["memories"] if m["memory_id"] == fact_id]
    assert rated["was_injected"] and rated["agent_feedback_count"] == 1 and rated["agent_relevance_score"] == 0.9


def test_a_prompt_that_reaches_the_daemon_before_session_start_keeps_the_session_s_project(daemon, tmp_path):
    """Copilot CLI runs sessionStart and userPromptSubmitted at once; the prompt often arrives first (11 of
    54 sessions of bench/real_harness.py). The hooks as Copilot runs them, in that order."""
    work = tmp_path / "proj-copilot-race"
    work.mkdir()
    key = str(uuid.uuid4())
    env = bare_env(KENNING_HOME=str(daemon.home), KENNING_PORT=str(daemon.port), HOME=str(tmp_path))

    def hook(event: str, **payload: str) -> None:
        ran = subprocess.run([KENNING, "hook", "copilot", event], input=json.dumps(
            {"sessionId": key, "timestamp": 1795868119046, "cwd": str(work), **payload}),
            capture_output=True, text=True, env=env, timeout=60)
        assert ran.returncode == 0, ran.stderr

    hook("userPromptSubmitted", prompt="How do we release the race service?")
    session = session_of(daemon, "proj-copilot-race", "copilot")  # the prompt's recall ran in this project
    assert session["session_key"] == key and session["cwd"] == str(work)
    hook("sessionStart", source="new", initialPrompt="How do we release the race service?")
    assert session_of(daemon, "proj-copilot-race", "copilot")["session_key"] == key


def test_agent_stop_rates_the_answer_of_its_own_turn_only():
    """Copilot CLI writes events.jsonl late: at agentStop the file may still end at an earlier turn. The hook
    rates only once the file holds its own hook.start record (the payload's timestamp); the earlier turn's
    rating is never sent twice (what it misses, the summary takes from the finished file)."""
    from kenning.hooks.adapters.copilot import turn_answer

    def line(kind: str, data: dict) -> str:
        return json.dumps({"type": kind, "data": data, "id": kind, "timestamp": "t", "parentId": None})

    first = [line("assistant.message", {"content": 'Done.\n<memory-feedback>{"m1": 0.9}</memory-feedback>'}),
             line("assistant.turn_end", {"turnId": "0"}),
             line("hook.start", {"hookType": "agentStop", "input": {"timestamp": 1000}})]
    second = [line("user.message", {"content": "and now?"}),
              line("assistant.message", {"content": 'Also done.\n<memory-feedback>{"m2": 0.5}</memory-feedback>'}),
              line("assistant.message", {"content": "sub", "parentToolCallId": "t1"}),
              line("hook.start", {"hookType": "agentStop", "input": {"timestamp": 2000}})]
    assert turn_answer("\n".join(first + second[:1]), 2000) == ""  # the file lags: nothing, not turn 1's answer
    assert "m2" in turn_answer("\n".join(first + second), 2000)
    assert "m1" in turn_answer("\n".join(first), 1000)


def test_connect_and_uninstall_give_the_settings_back_byte_for_byte(copilot_bin, daemon, tmp_path):
    original = '{\n\t"theme": "dark",\n\t"hooks": {"postToolUse": [{"type": "command", "bash": "echo x"}]}\n}'
    home, work = setup_home(tmp_path, "proj-copilot-install", original)
    repo_hooks = work / ".github" / "hooks" / "team.json"
    repo_hooks.parent.mkdir(parents=True)
    repo_hooks.write_text('{"version": 1, "hooks": {}}\n')
    path = home / ".copilot" / "settings.json"
    connect("copilot", daemon=daemon, HOME=str(home), cwd=work)
    hooks = json.loads(path.read_text())["hooks"]
    assert hooks["postToolUse"][0] == {"type": "command", "bash": "echo x"}  # the user's hook stays first
    ours = {event: entries[-1] for event, entries in hooks.items()}
    assert set(ours) == EVENTS
    assert ours["sessionEnd"]["timeoutSec"] == 30 and ours["postToolUse"]["timeoutSec"] == 5
    assert f"KENNING_PORT={daemon.port}" in ours["sessionStart"]["bash"]
    installed = path.read_bytes()
    connect("copilot", daemon=daemon, HOME=str(home), cwd=work)
    assert path.read_bytes() == installed  # idempotent

    with ChatServer() as server:  # a real run with the hooks in place leaves the file as it was
        done = run_copilot(copilot_bin, home, work, server, "hello")
    assert done.returncode == 0, done.stderr[-2000:]
    assert path.read_bytes() == installed

    doctor = subprocess.run([KENNING, "doctor", "--json"], capture_output=True, text=True, cwd=work, timeout=120,
                            env=bare_env(KENNING_HOME=str(daemon.home), KENNING_PORT=str(daemon.port), HOME=str(home)))
    [check] = [h for h in json.loads(doctor.stdout)["harnesses"] if h["harness"] == "copilot"]
    assert check["problems"] == [] and check["reaches"] == [daemon.base_url] and set(check["events"]) == EVENTS

    connect("copilot", "--uninstall", daemon=daemon, HOME=str(home), cwd=work)
    assert path.read_text() == original
    assert not list(path.parent.glob("settings.json.kenning-*"))
    assert [p.name for p in repo_hooks.parent.iterdir()] == ["team.json"]
    assert repo_hooks.read_text() == '{"version": 1, "hooks": {}}\n'


def test_connect_creates_the_file_and_uninstall_removes_it(daemon, tmp_path):
    home, work = setup_home(tmp_path, "proj-copilot-fresh")
    path = home / ".copilot" / "settings.json"
    connect("copilot", daemon=daemon, HOME=str(home))
    assert set(json.loads(path.read_text())["hooks"]) == EVENTS
    connect("copilot", "--uninstall", daemon=daemon, HOME=str(home))
    assert sorted(p.name for p in path.parent.iterdir()) == []


def test_copilot_goes_on_when_the_daemon_is_down(copilot_bin, tmp_path):
    home, work = setup_home(tmp_path, "proj-copilot-down")
    kenning_home = tmp_path / "kenning-home"
    connect("copilot", port=free_port(), KENNING_HOME=str(kenning_home), HOME=str(home))
    with ChatServer() as server:
        server.script(tool("bash", command="echo hi", description="say hi"), "done")
        key = str(uuid.uuid4())
        done = run_copilot(copilot_bin, home, work, server, "say hi", session_id=key)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "done" in done.stdout
    assert len(server.model_requests()) == 2
    spooled = [json.loads(p.read_text()) for p in (kenning_home / "spool").glob("*.json")]
    assert {"/api/hooks/session-start", "/api/hooks/session-end"} <= {s.get("path") for s in spooled}
    # session end is kept with where its transcript lies: the replay reads it then (the body keeps no transcript)
    [end] = [s for s in spooled if s["path"] == "/api/hooks/session-end"]
    assert end["transcript_path"] == str(home / ".copilot" / "session-state" / key / "events.jsonl")
    assert "transcript" not in end["body"]
