"""Tables at 80 columns: every line fits, every id is printed whole, `--json` prints the same rows.

The commands run as real `kenning` processes against the shared daemon (`COLUMNS=80`); the
renderer itself is also driven directly with a 80-column rich Console for a wide table.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

from rich.console import Console

from kenning.cli.tables import Col, fmt, print_table

KENNING = str(Path(sys.executable).with_name("kenning"))
LONG = ("Deploy the payments service with scripts/deploy-payments.sh only after the migration check "
        "passes on staging and the on-call engineer has acknowledged the change window in #deploys")


def cli(daemon, *args: str, columns: int = 80) -> subprocess.CompletedProcess:
    env = {**os.environ, **daemon.env, "COLUMNS": str(columns)}
    result = subprocess.run([KENNING, *args], env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, (args, result.stderr)
    return result


def assert_fits(out: str, ids: list[str], width: int = 80) -> None:
    lines = out.splitlines()
    too_wide = [line for line in lines if len(line) > width]
    assert not too_wide, too_wide
    words = set(re.findall(r"[\w-]+", out))
    for memory_id in ids:
        assert memory_id in words, f"{memory_id} not printed whole in:\n{out}"


def test_memory_and_session_tables_fit_80_columns_with_whole_ids(daemon):
    project = f"tables-{uuid.uuid4().hex[:8]}"
    key = str(uuid.uuid4())
    with daemon.client() as http:
        ids = [http.post("/api/memory/remember", json={"content": f"{LONG} (variant {i})", "project": project,
                                                        "importance": 0.9}).json()["id"] for i in range(3)]
        http.post("/api/hooks/session-start", json={"session_key": key, "project": project,
                                                   "harness": "claude-code"}).raise_for_status()
        http.post("/api/hooks/user-prompt-submit", json={"session_key": key,
                                                        "prompt": "how do we deploy payments?"}).raise_for_status()

    listed = cli(daemon, "list", "-p", project)
    assert_fits(listed.stdout, ids)
    assert "scripts/deploy-payments.sh" in listed.stdout  # the content moved to a detail line, not dropped
    assert {m["id"] for m in json.loads(cli(daemon, "list", "-p", project, "--json").stdout)["items"]} == set(ids)

    recalled = cli(daemon, "recall", "deploy payments staging", "-p", project)
    assert_fits(recalled.stdout, ids)
    assert "words + meaning" in recalled.stdout and "strong" in recalled.stdout  # how it matched, found by which legs

    sessions = cli(daemon, "sessions", "list", "-p", project)
    assert_fits(sessions.stdout, [key])
    shown = cli(daemon, "sessions", "show", key)
    detail = json.loads(cli(daemon, "sessions", "show", key, "--json").stdout)
    offered = [m["memory_id"] for m in detail["memories"]]
    assert set(ids) <= set(offered)
    assert_fits(shown.stdout, [key, *offered])

    wide = cli(daemon, "list", "-p", project, columns=200)
    assert any(line.startswith(ids[0]) and "Deploy the payments" in line for line in wide.stdout.splitlines())


def test_a_wide_table_keeps_ids_and_fits_80_columns():
    buffer = io.StringIO()
    console = Console(file=buffer, width=80, color_system=None)
    rows = [{"id": f"run-{uuid.uuid4()}", "at": "2026-11-23 21:47", "trigger": "session-threshold-reached",
             "loss": 0.123456, "delta": -0.0123, "why": "agent rated it 0.9; judge 0.8; " * 6} for _ in range(4)]
    print_table(console, [Col("id", "id", "id"), Col("at", "at", max_width=16), Col("trigger", "trigger"),
                          Col("loss", lambda r: fmt(r["loss"], 4), "num"),
                          Col("Δ", lambda r: fmt(r["delta"], 3, signed=True), "num")],
                rows, detail=Col("why", "why"), title="4 runs")
    out = buffer.getvalue()
    assert_fits(out, [r["id"] for r in rows])
    assert "-0.012" in out and "0.1235" in out and "agent rated it 0.9" in out
