"""The hook command `kenning connect` installs runs kenning's entry script with this Python
(`<python> -P …/kenning/cli/entry.py hook …`), not pip's console script, whose `import re` cost
~6 ms of CPU per agent step (issue 36). Installs of the older form are recognised: connect
replaces them, uninstall still restores the user's file byte for byte, doctor says to upgrade."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from kenning.cli import entry

KENNING = str(Path(sys.executable).with_name("kenning"))
ENTRY = entry.__file__

ORIGINAL = (b'{\n\t"model": "opus",\n\t"hooks": {"Stop": [{"hooks": [{"type": "command", '
            b'"command": "notify-send done"}]}]}\n}')
OLD_EVENTS = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt-submit", "Stop": "stop"}


def connect(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    return subprocess.run([KENNING, "connect", *args], capture_output=True, text=True, env={**env, "HOME": str(home)},
                          timeout=60)


def commands(path: Path) -> list[str]:
    hooks = json.loads(path.read_text())["hooks"]
    return [h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]]


def old_install(path: Path) -> None:
    """What `kenning connect claude-code` wrote before: the console script's commands, the original saved."""
    data = json.loads(ORIGINAL)
    for event, name in OLD_EVENTS.items():
        data["hooks"].setdefault(event, []).append({"hooks": [{"type": "command", "command": f"{KENNING} hook {name}",
                                                               "timeout": 10}]})
    path.write_text(json.dumps(data, indent=2) + "\n")
    path.with_name(path.name + ".kenning-backup").write_bytes(ORIGINAL)


def harness_problems(home: Path) -> list[str]:
    """doctor's harness problems for claude-code at user scope (hooks.connectors.check)."""
    probe = ("import json; from pathlib import Path; from kenning.hooks.connectors.check import check_harnesses; "
             "print(json.dumps([p for c in check_harnesses('http://127.0.0.1:3850', Path.cwd()) "
             "if c['harness'] == 'claude-code' for p in c['problems']]))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=home, timeout=60,
                          env={**env, "HOME": str(home)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_connect_installs_the_entry_script_with_this_python(tmp_path):
    path = tmp_path / "settings.json"
    path.write_bytes(ORIGINAL)
    assert connect("claude-code", "--settings", str(path), home=tmp_path).returncode == 0
    ours = [c for c in commands(path) if "kenning" in c]
    assert len(ours) == 7
    for command in ours:
        assert command.startswith(f"{sys.executable} -P {ENTRY} hook "), command
        assert not command.startswith(KENNING)


def test_an_old_install_is_flagged_by_doctor_upgraded_by_connect_and_uninstalled_byte_for_byte(tmp_path):
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    old_install(path)
    assert any("console script" in p for p in harness_problems(tmp_path))

    assert connect("claude-code", "--user", home=tmp_path).returncode == 0
    after = commands(path)
    assert "notify-send done" in after and not any(c.startswith(KENNING) for c in after)  # the old entries replaced
    assert sum(c.startswith(f"{sys.executable} -P {ENTRY} hook ") for c in after) == 7
    assert harness_problems(tmp_path) == []

    removed = connect("claude-code", "--user", "--uninstall", home=tmp_path)
    assert removed.returncode == 0 and "byte-for-byte" in removed.stdout
    assert path.read_bytes() == ORIGINAL


def test_uninstall_takes_out_an_old_install_that_connect_never_upgraded(tmp_path):
    path = tmp_path / "settings.json"
    old_install(path)
    removed = connect("claude-code", "--settings", str(path), "--uninstall", home=tmp_path)
    assert removed.returncode == 0, removed.stderr
    assert path.read_bytes() == ORIGINAL
