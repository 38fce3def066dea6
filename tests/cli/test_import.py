"""`kenning import` is all or nothing (issue 12 item 7): a bad line at 400 of 600 stores nothing and
the error names the line — through the daemon, in local mode, and on the HTTP batch route."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest


def _write(path: Path, project: str, bad_line: int | None, bad: str) -> Path:
    lines = []
    for number in range(1, 601):
        if number == bad_line:
            lines.append(bad)
        elif number == 10:
            lines.append("")  # blank lines are skipped but still counted in line numbers
        else:
            lines.append(json.dumps({"content": f"imported fact {number} about service {project}", "project": project}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(home: Path, *args: str, port: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "KENNING_HOME": str(home)}
    if port:
        env["KENNING_PORT"] = str(port)
    return subprocess.run([sys.executable, "-m", "kenning", *args], env=env, capture_output=True, text=True,
                          timeout=300)


BAD_LINES = {
    "bad-type": (json.dumps({"content": "x", "type": "bogus"}), "unknown memory type"),
    "bad-importance": (json.dumps({"content": "x", "importance": 7}), "importance"),
    "not-json": ("{not json", "not JSON"),
    "no-content": (json.dumps({"type": "fact"}), "content"),
    "unknown-field": (json.dumps({"content": "x", "colour": "red"}), "colour"),
}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_bad_line_at_400_of_600_stores_nothing_through_the_daemon(daemon, tmp_path, case):
    project = f"imp-{uuid.uuid4().hex[:8]}"
    bad, expected = BAD_LINES[case]
    path = _write(tmp_path / "in.jsonl", project, 400, bad)
    out = _run(daemon.home, "import", str(path), port=daemon.port)
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"in.jsonl:400:" in out.stderr and expected in out.stderr and "nothing was imported" in out.stderr
    total = daemon.get("/api/memory", project=project).json()["total"]
    assert total == 0


def test_good_file_imports_all_600_through_the_daemon(daemon, tmp_path):
    project = f"imp-{uuid.uuid4().hex[:8]}"
    out = _run(daemon.home, "import", str(_write(tmp_path / "ok.jsonl", project, None, "")), port=daemon.port)
    assert out.returncode == 0, out.stderr
    assert "imported 599 memories" in out.stdout  # 600 lines, one of them blank
    assert daemon.get("/api/memory", project=project).json()["total"] == 599


def test_bad_line_stores_nothing_in_local_mode(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("port: 1\n")  # no daemon answers there: the CLI uses the store directly
    path = _write(tmp_path / "local.jsonl", "local", 400, BAD_LINES["bad-type"][0])
    out = _run(home, "import", str(path))
    assert out.returncode == 2 and "local.jsonl:400:" in out.stderr and "unknown memory type" in out.stderr
    db = home / "memories.db"
    if db.exists():
        import sqlean

        conn = sqlean.connect(str(db))
        assert conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 0
        conn.close()


def test_http_batch_route_is_all_or_nothing_and_names_the_item(daemon):
    project = f"imp-{uuid.uuid4().hex[:8]}"
    memories = [{"content": f"batch fact {i} for {project}", "project": project} for i in range(600)]
    memories[399] = {"content": "x", "type": "bogus", "project": project}
    with daemon.client() as client:
        r = client.post("/api/memory/batch", json={"memories": memories})
        assert r.status_code == 400 and "memory 400 of 600" in r.json()["error"]
        memories[399] = {"content": "x", "importance": 9, "project": project}
        r = client.post("/api/memory/batch", json={"memories": memories})
        assert r.status_code == 422 and "memories.399.importance" in r.json()["error"]
        assert client.get("/api/memory", params={"project": project}).json()["total"] == 0
