"""kenning in the real OpenCode (npm opencode-ai, pinned in tests/harness/clis.py), headless
against a scripted chat-completions server: `kenning connect opencode` writes a dependency-free
plugin (OpenCode installs no package for it), the memories reach the model's system prompt, tool
steps (a failing bash command too, run by a subagent) reach the observer, a subagent's prompt is
not taken for the user's, `session.idle` ends the session with its episodes and no harness text, OpenCode goes on when the daemon is down, and uninstall leaves the
config folder as it was, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.harnesses.daemon import free_port
from bench.harnesses.chat_server import ChatServer
from bench.harnesses.cli_runners import opencode_dirs as setup_home, opencode_env as home_env, run_opencode
from tests.harness.require import require_cli
from bench.harnesses.kenning_setup import connect
from tests.harness.kenning_checks import assert_no_harness_text, episodes, observed, remember, session_of, stored_texts
from bench.harnesses.scripted import tool

FAILS_ONCE = "test -e fixed.flag || { touch fixed.flag; echo 'make: *** [test] Error 1' >&2; exit 2; }"


@pytest.fixture(scope="module")
def opencode_bin() -> Path:
    return require_cli("opencode")


def snapshot(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))}


def test_memories_reach_opencode_and_its_session_is_stored(opencode_bin, daemon, tmp_path):
    home, work = setup_home(tmp_path, "proj-opencode-flow")
    connect("opencode", daemon=daemon, **home_env(home))
    rule = "Deploy the opencode flow service with scripts/ship.sh, never with make deploy"
    fact = "The billing queue of the opencode flow service drains through worker pool opool-2"
    remember(daemon, rule, "proj-opencode-flow", applies="project")  # opens sessions (issue 31)
    remember(daemon, fact, "proj-opencode-flow", type="fact", confidence=0.5)

    subagent = "SUBAGENT TASK: run the test suite until it passes"
    with ChatServer() as server:
        server.script(tool("task", description="run the tests", prompt=subagent, subagent_type="general"),
                      tool("bash", command=FAILS_ONCE, description="run the tests"),  # the subagent's calls
                      tool("bash", command=FAILS_ONCE, description="run the tests again"),
                      "The tests pass now.",
                      "The billing queue drains through opool-2.")  # the main agent's answer
        done = run_opencode(opencode_bin, home, work, server, "Which worker pool drains the billing queue?")
    assert done.returncode == 0, done.stderr[-2000:]
    agent_calls = server.model_requests()
    assert len(agent_calls) == 5
    for call in (agent_calls[0], agent_calls[1]):  # the main agent's first call and the subagent's
        system = [m["content"] for m in call.body["messages"] if m["role"] == "system"]
        assert any(rule in text for text in system), "session start's memories did not reach the system prompt"
        assert any(fact in text for text in system), "the prompt's memories did not reach the system prompt"
    modules = home / ".config" / "opencode" / "node_modules"
    assert [p.name for p in modules.iterdir()] == [".kenning"]  # OpenCode installed no package

    session = session_of(daemon, "proj-opencode-flow", "opencode")  # one: the subagent's is not a session
    seen = observed(daemon, session["session_key"])
    assert seen["finished"]["tool_calls"] == 3  # task + the subagent's two bash calls; session.idle ended it
    assert [s for s in seen["signals"] if s["signal_class"] == "error_retry"]  # the failure, then the fix

    stored = episodes(daemon, session["session_key"])
    assert any("Which worker pool drains the billing queue?" in e and "drains through opool-2" in e for e in stored)
    texts = stored_texts(daemon, session["session_key"])
    assert_no_harness_text(texts)
    assert not [t for t in texts if "User: " + subagent in t]  # the agent's words are not the user's


def test_uninstall_leaves_the_config_folder_as_it_was(daemon, tmp_path):
    home, _ = setup_home(tmp_path, "proj-opencode-install")
    folder = home / ".config" / "opencode"
    (folder / "opencode.json").write_text('{\n  "theme": "tokyonight"\n}\n')
    before = snapshot(folder)
    connect("opencode", daemon=daemon, **home_env(home))
    plugin = folder / "plugins" / "kenning.js"
    source = plugin.read_text()
    assert "import " not in source.replace('import { spawn } from "node:child_process";', "")  # built-ins only
    assert f'"KENNING_PORT": "{daemon.port}"' in source
    installed = snapshot(folder)
    connect("opencode", daemon=daemon, **home_env(home))
    assert snapshot(folder) == installed  # idempotent
    connect("opencode", "--uninstall", daemon=daemon, **home_env(home))
    assert snapshot(folder) == before


def test_opencode_goes_on_when_the_daemon_is_down(opencode_bin, tmp_path):
    home, work = setup_home(tmp_path, "proj-opencode-down")
    kenning_home = tmp_path / "kenning-home"
    connect("opencode", port=free_port(), KENNING_HOME=str(kenning_home), **home_env(home))
    with ChatServer() as server:
        server.script(tool("bash", command="echo hi", description="say hi"), "done")
        done = run_opencode(opencode_bin, home, work, server, "say hi")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "done" in done.stdout
    assert len(server.model_requests()) == 2
    assert list((kenning_home / "spool").glob("*.json"))  # kept for the daemon's next start
