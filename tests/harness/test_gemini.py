"""kenning in the real Gemini CLI (npm @google/gemini-cli, pinned in tests/harness/clis.py),
headless against a scripted Gemini API server: `kenning connect gemini` installs hooks (timeouts
in milliseconds), the memories reach the model's requests, tool steps (a failing shell command
too) reach the observer, session end stores the conversation's episodes and no harness text,
the hooks never block Gemini CLI when the daemon is down, and uninstall gives back the settings
byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.harnesses.daemon import free_port
from bench.harnesses.cli_runners import gemini_dirs as setup_home, run_gemini
from tests.harness.require import require_cli
from bench.harnesses.gemini_server import GeminiServer
from bench.harnesses.kenning_setup import connect
from tests.harness.kenning_checks import (
    assert_no_harness_text, episodes, observed, remember, request_messages, session_of, stored_texts,
)
from bench.harnesses.scripted import tool

FAILS_ONCE = "test -e fixed.flag || { touch fixed.flag; echo 'make: *** [test] Error 1' >&2; exit 2; }"


@pytest.fixture(scope="module")
def gemini_bin() -> Path:
    return require_cli("gemini")


def test_memories_reach_gemini_and_its_session_is_stored(gemini_bin, daemon, tmp_path):
    home, work = setup_home(tmp_path, "proj-gemini-flow")
    connect("gemini", daemon=daemon, HOME=str(home))
    rule = "Deploy the gemini flow service with scripts/ship.sh, never with make deploy"
    fact = "The billing queue of the gemini flow service drains through worker pool gpool-4"
    remember(daemon, rule, "proj-gemini-flow", applies="project")  # opens sessions (issue 31)
    remember(daemon, fact, "proj-gemini-flow", type="fact", confidence=0.5)

    with GeminiServer() as server:
        server.script(tool("run_shell_command", command=FAILS_ONCE), tool("run_shell_command", command=FAILS_ONCE),
                      "The billing queue drains through gpool-4.")
        done = run_gemini(gemini_bin, home, work, server, "Which worker pool drains the billing queue?")
    assert done.returncode == 0, done.stderr[-2000:]
    first = request_messages(server.model_requests()[0].body)
    assert [m for m in first if rule in m], "session start's memories did not reach the model"
    assert [m for m in first if fact in m], "the prompt's memories did not reach the model"

    session = session_of(daemon, "proj-gemini-flow", "gemini")
    seen = observed(daemon, session["session_key"])
    assert seen["finished"]["tool_calls"] == 2
    assert [s for s in seen["signals"] if s["signal_class"] == "error_retry"]  # the failure, then the fix

    stored = episodes(daemon, session["session_key"])  # SessionEnd stored the transcript's episodes
    assert any("Which worker pool drains the billing queue?" in e and "drains through gpool-4" in e for e in stored)
    assert_no_harness_text(stored_texts(daemon, session["session_key"]))
    transcript = daemon.get(f"/api/sessions/{session['session_key']}").json()
    assert transcript["session"]["status"] == "ended"


def test_connect_uses_milliseconds_and_uninstall_restores_bytes(daemon, tmp_path):
    original = '{\n\t"theme": "GitHub",\n\t"hooks": {"AfterTool": [{"hooks": [{"type": "command", "command": "echo x"}]}]}\n}'
    home, _ = setup_home(tmp_path, "proj-gemini-install", original)
    path = home / ".gemini" / "settings.json"
    connect("gemini", daemon=daemon, HOME=str(home))
    hooks = json.loads(path.read_text())["hooks"]
    assert hooks["AfterTool"][0]["hooks"][0]["command"] == "echo x"
    ours = {event: groups[-1]["hooks"][0] for event, groups in hooks.items()}
    assert set(ours) == {"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "PreCompress", "SessionEnd"}
    assert ours["SessionEnd"]["timeout"] == 30_000 and ours["AfterTool"]["timeout"] == 5_000  # milliseconds
    assert f"KENNING_PORT={daemon.port}" in ours["SessionStart"]["command"]
    installed = path.read_bytes()
    connect("gemini", daemon=daemon, HOME=str(home))
    assert path.read_bytes() == installed
    connect("gemini", "--uninstall", daemon=daemon, HOME=str(home))
    assert path.read_text() == original


def test_gemini_goes_on_when_the_daemon_is_down(gemini_bin, tmp_path):
    home, work = setup_home(tmp_path, "proj-gemini-down")
    kenning_home = tmp_path / "kenning-home"
    connect("gemini", port=free_port(), KENNING_HOME=str(kenning_home), HOME=str(home))
    with GeminiServer() as server:
        server.script(tool("run_shell_command", command="echo hi"), "done")
        done = run_gemini(gemini_bin, home, work, server, "say hi")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "done" in done.stdout
    assert len(server.model_requests()) == 2
    assert list((kenning_home / "spool").glob("*.json"))  # kept for the daemon's next start
