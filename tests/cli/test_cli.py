"""The `kenning` command as a user runs it: real processes, KENNING_HOME, daemon and local modes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import typer.main

from kenning.cli.main import COMMANDS, app


def run(home, *args, port=None, input_text=None):
    env = {**os.environ, "KENNING_HOME": str(home)}
    if port:
        env["KENNING_PORT"] = str(port)
    return subprocess.run([sys.executable, "-m", "kenning", *args], env=env, capture_output=True,
                          text=True, timeout=180, input=input_text)


def test_every_command_has_help_text():
    group = typer.main.get_command(app)
    for name in COMMANDS:  # sub-command modules are imported at need: load every one
        group.load(name)

    def walk(command, path):
        yield path, command
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(sub, f"{path} {name}")

    for path, command in walk(group, "kenning"):
        assert (command.help or "").strip(), f"{path} has no help text"


def test_local_mode_remember_recall_forget_export_import(tmp_path):
    home = tmp_path / "home"
    stored = json.loads(run(home, "remember", "Prefer ruff over flake8", "-p", "demo", "--json").stdout)
    assert stored["deduped"] is False
    results = json.loads(run(home, "recall", "which linter", "--json").stdout)
    assert results[0]["id"] == stored["id"]
    assert run(home, "forget", stored["id"]).returncode == 0
    assert json.loads(run(home, "recall", "linter", "--json").stdout) == []
    assert run(home, "recover", stored["id"]).returncode == 0
    out = tmp_path / "export.json"
    assert run(home, "export", "--out", str(out)).returncode == 0
    exported = json.loads(out.read_text())
    assert [m["content"] for m in exported] == ["Prefer ruff over flake8"]
    md = tmp_path / "export.md"
    assert run(home, "export", "--out", str(md), "--format", "markdown").returncode == 0
    assert "Prefer ruff over flake8" in md.read_text()
    again = run(home, "import", str(out))  # the JSON export reads back; the id is known: nothing new
    assert again.returncode == 0 and "imported 0 memories (1 duplicates skipped)" in again.stdout, again.stderr

    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text("\n".join(json.dumps({"content": f"imported fact {i}", "project": "demo",
                                           "created_at": "2023-05-0%dT10:00:00Z" % (i + 1)}) for i in range(5)))
    result = run(home, "import", str(jsonl))
    assert result.returncode == 0 and "imported 5" in result.stdout
    listing = json.loads(run(home, "list", "-p", "demo", "--json").stdout)
    assert listing["total"] == 6
    assert any(m["created_at"].startswith("2023-05-01") for m in listing["items"])


def test_cli_errors_are_one_line_with_exit_codes(tmp_path):
    home = tmp_path / "home"
    missing = run(home, "show", "doesnotexist")
    assert missing.returncode != 0 and "doesnotexist" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"content": "ok"}\nnot json\n')
    result = run(home, "import", str(bad))
    assert result.returncode == 2 and "bad.jsonl:2" in result.stderr
    assert json.loads(run(home, "list", "--json").stdout)["total"] == 0  # nothing half-imported
    (home / "config.yaml").write_text("port: not-a-number\n")
    broken = run(home, "list")
    assert broken.returncode == 2 and "port" in broken.stderr


def test_cli_talks_to_a_running_daemon(daemon):
    stored = json.loads(run(daemon.home, "remember", "CLI through the daemon", "-p", "cli-daemon", "--json",
                            port=daemon.port).stdout)
    with daemon.client() as http:
        assert http.get(f"/api/memory/{stored['id']}").json()["content"] == "CLI through the daemon"
    status = run(daemon.home, "daemon", "status", port=daemon.port)
    assert status.returncode == 0 and "running" in status.stdout


def test_daemon_start_status_stop(tmp_path, unused_port):
    home, port = tmp_path / "dhome", unused_port
    try:
        started = run(home, "daemon", "start", port=port)
        assert started.returncode == 0, started.stderr
        assert (home / "daemon.pid").exists()
        assert run(home, "daemon", "status", port=port).returncode == 0
    finally:
        stopped = run(home, "daemon", "stop", port=port)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert run(home, "daemon", "status", port=port).returncode == 3
    assert (home / "logs" / "daemon.log").exists()
