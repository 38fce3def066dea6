"""Schemathesis against a real daemon's /openapi.json: every check, bounded examples, 0 failures.

The daemon has a home of its own, so the fuzzer's odd memories never reach other tests.
Per-operation allowances (rules JSON Schema cannot state) live in schemathesis.toml.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from bench.harnesses.daemon import start_daemon

CONFIG = Path(__file__).with_name("schemathesis.toml")


def test_openapi_schema_holds_under_fuzzing(tmp_path):
    daemon = start_daemon(tmp_path / "fuzz-home")
    try:
        cli = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or "schemathesis"
        run = subprocess.run(
            [cli, "--config-file", str(CONFIG), "run", f"{daemon.base_url}/openapi.json",
             "--checks", "all", "--seed", "1", "--no-color"],
            capture_output=True, text=True, timeout=900, cwd=tmp_path,
        )
    finally:
        daemon.stop()
    report = run.stdout + run.stderr
    assert "API Operations:" in report, report[-4000:]  # it really ran
    assert run.returncode == 0, report[-12000:]
    assert "Server error" not in report
