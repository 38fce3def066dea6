"""Path arguments are checked before any file-system call (issue 33, item 6): a path the file system
cannot take — a component over 255 bytes, or 4096 bytes in all — answers 400 with a message naming
ENAMETOOLONG on every route that takes a path, on a real daemon. Before, POST /api/ingest/git
answered 500 (the OSError of `Path.is_dir`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

KENNING = str(Path(sys.executable).with_name("kenning"))

LONG_NAME = "/tmp/" + "n" * 300 + "/repo"  # one component over NAME_MAX
LONG_PATH = "/" + "/".join(["é" * 100] * 21)  # 2,121 characters, 4,221 bytes: over PATH_MAX


def _routes(path: str) -> list[tuple[str, str, dict]]:
    return [
        ("POST", "/api/ingest/git", {"json": {"path": path, "wait": True}}),
        ("POST", "/api/ingest/git", {"json": {"path": path}}),
        ("POST", "/api/code/index", {"json": {"path": path, "project": "too-long"}}),
        ("POST", "/api/code/refresh", {"json": {"files": [path]}}),
        ("GET", "/api/code/memories", {"params": {"files": [path]}}),
        ("GET", "/api/code/impact", {"params": {"target": "app.py", "cwd": path}}),
    ]


@pytest.mark.parametrize("path", [LONG_NAME, LONG_PATH], ids=["long-component", "long-path"])
def test_a_path_the_file_system_cannot_take_is_a_400_with_a_message(daemon, path):
    with daemon.client(timeout=120) as http:
        answers = [(route, http.request(method, route, **kw)) for method, route, kw in _routes(path)]
    wrong = [(route, r.status_code, r.text[:200]) for route, r in answers
             if r.status_code != 400 or "ENAMETOOLONG" not in r.json().get("error", "")]
    assert wrong == []


@pytest.mark.parametrize("command", [["code", "index"], ["ingest", "git"]], ids=["code-index", "ingest-git"])
def test_the_cli_offline_answers_one_line_and_exit_2(tmp_path, command):
    """The same paths to the CLI with no daemon (its local store): one line naming ENAMETOOLONG, exit 2,
    no traceback (before: `kenning code index` died in Path.is_dir with OSError)."""
    env = {**os.environ, "KENNING_HOME": str(tmp_path / "home"), "KENNING_PORT": "1"}
    done = subprocess.run([KENNING, *command, LONG_NAME], env=env, capture_output=True, text=True, timeout=300)
    out = (done.stdout + done.stderr).strip()
    assert done.returncode == 2 and "ENAMETOOLONG" in out and "Traceback" not in out, out[-2000:]
