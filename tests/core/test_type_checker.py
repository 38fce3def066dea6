"""`make lint` runs mypy with pyproject's [tool.mypy]: a wrong `cast` or a TypedDict that drifted from
its readers is caught there, not by a user. Each case writes a tiny module into a temp dir and runs the
pinned mypy with the project's config over it: the planted mistake fails, the correct version passes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# A reader of the error ring that casts rows to the wrong TypedDict: ErrorEntry's `stage` is a str.
WRONG_CAST = """
from typing import cast
from kenning.core.telemetry import ErrorEntry

def stage_number(row: dict[str, object]) -> int:
    entry = cast(ErrorEntry, row)
    return entry["stage"] + 1
"""
RIGHT_CAST = """
from typing import cast
from kenning.core.telemetry import ErrorEntry

def stage_name(row: dict[str, object]) -> str:
    entry = cast(ErrorEntry, row)
    return entry["stage"] + "!"
"""

# A writer that kept an old key name after ErrorEntry renamed it (`where` -> `stage`).
DRIFTED = """
from kenning.core.telemetry import ErrorEntry

def entry(message: str) -> ErrorEntry:
    return {"at": "2026-01-01T00:00:00Z", "where": "extract", "message": message, "context": {}}
"""
CURRENT = """
from kenning.core.telemetry import ErrorEntry

def entry(message: str) -> ErrorEntry:
    return {"at": "2026-01-01T00:00:00Z", "stage": "extract", "message": message, "context": {}}
"""


def run_mypy(workdir: Path, source: str) -> subprocess.CompletedProcess[str]:
    """One fresh directory and cache per run: DRIFTED and CURRENT have the same size, and mypy's incremental
    cache would take a second file written within the same mtime second for the first one."""
    workdir.mkdir()
    module = workdir / "planted.py"
    module.write_text(source)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(workdir / "cache"), str(module)],
        cwd=workdir, capture_output=True, text=True, timeout=300,
    )


def test_make_lint_runs_the_checker() -> None:
    recipe = ROOT.joinpath("Makefile").read_text().split("\nlint:", 1)[1].split("\n\n", 1)[0]
    assert "$(VENV)/bin/mypy" in recipe


@pytest.mark.parametrize(("bad", "good", "expected"), [
    (WRONG_CAST, RIGHT_CAST, '[operator]'),
    (DRIFTED, CURRENT, '[typeddict-unknown-key]'),
], ids=["wrong-cast", "drifted-typeddict"])
def test_planted_mistake_fails_and_correct_version_passes(tmp_path: Path, bad: str, good: str,
                                                         expected: str) -> None:
    failed = run_mypy(tmp_path / "bad", bad)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "planted.py" in failed.stdout and expected in failed.stdout, failed.stdout

    passed = run_mypy(tmp_path / "good", good)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Success: no issues found in 1 source file" in passed.stdout
