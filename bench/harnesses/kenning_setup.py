"""kenning connected to a real harness, as a user does it: `kenning connect <harness>` in a shell
without our variables, and the text of harnesses and of kenning that must never be stored."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

KENNING = str(Path(sys.executable).with_name("kenning"))
# Text of the harnesses and of kenning itself that must never be stored as the conversation
HARNESS_MARKERS = ("<kenning-memories>", "<memory-feedback>", "Memories from earlier sessions", "<hook_context>",
                   "<environment_context>", "<session_context>", "AGENTS.md", "skills_instructions",
                   "You are a coding agent", "This is the Gemini CLI", "You are opencode", "You are OpenCode",
                   "<system_reminder>", "<current_datetime>", "You are the GitHub Copilot CLI")


def bare_env(**extra: str) -> dict[str, str]:
    """This process's environment without KENNING_* (a harness's hooks must carry what they need)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    env.update(extra)
    return env


def connect(harness: str, *args: str, daemon: Any = None, port: int | None = None, cwd: Path | None = None,
            **env: str) -> subprocess.CompletedProcess:
    """`kenning connect <harness> …` in a shell pointing at `daemon` (or at a closed `port`)."""
    kenning_env = {"KENNING_HOME": str(daemon.home), "KENNING_PORT": str(daemon.port)} if daemon is not None else {}
    if port is not None:
        kenning_env["KENNING_PORT"] = str(port)
    result = subprocess.run([KENNING, "connect", harness, *args], capture_output=True, text=True, cwd=cwd,
                            env=bare_env(**kenning_env, **env), timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result
