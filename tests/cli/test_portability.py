"""Portability (issue 13 item 4): every export format imports back — into a fresh home the same
memories (ids, types, tags, dates), and a second import stores nothing — plus CLAUDE.md, AGENTS.md
and .cursorrules read as memories, and bad files refused whole with a one-line error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from kenning.core.types import Memory
from kenning.memory import portable

SEED_TYPES = ("fact", "decision", "constraint", "gotcha", "preference", "procedural")
COMPARED = ("id", "content", "type", "project", "scope", "importance", "tags", "pinned", "created_at", "source")


def run(home: Path, *args: str, port: int | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "KENNING_HOME": str(home)}
    if port:
        env["KENNING_PORT"] = str(port)
    return subprocess.run([sys.executable, "-m", "kenning", *args], env=env, capture_output=True, text=True,
                          timeout=300)


def seed(daemon, project: str, count: int = 12) -> None:
    memories = [{"content": f"{project} memory {i}: the {SEED_TYPES[i % 6]} about <service-{i}> --> ok",
                 "type": SEED_TYPES[i % 6], "project": project, "importance": round(0.3 + i / 40, 3),
                 "tags": [f"t{i % 3}"] + (["shared"] if i % 2 else []), "pinned": i == 3,
                 "created_at": f"2024-03-{i + 1:02d}T08:30:00Z", "source": "seed"} for i in range(count)]
    with daemon.client() as http:
        assert http.post("/api/memory/batch", json={"memories": memories}).status_code == 200


def listing(base_url_get, project: str) -> list[dict]:
    items = base_url_get("/api/memory", project=project, limit=1000).json()["items"]
    return sorted(({k: m[k] for k in COMPARED} for m in items), key=lambda m: m["id"])


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    from bench.harnesses.daemon import start_daemon

    proc = start_daemon(tmp_path_factory.mktemp("fresh-home"))
    yield proc
    proc.stop()


def test_every_format_round_trips_into_a_fresh_home_without_duplicates(daemon, fresh, tmp_path):
    tag = uuid.uuid4().hex[:6]
    files = {}
    for fmt, name in (("json", "out.json"), ("jsonl", "out.jsonl"), ("claude-md", "CLAUDE.md"),
                      ("markdown", "memories.md")):
        project = f"port-{fmt}-{tag}"
        seed(daemon, project)
        files[fmt] = tmp_path / fmt / name
        files[fmt].parent.mkdir()
        out = run(daemon.home, "export", "--out", str(files[fmt]), "--format", fmt, "-p", project, port=daemon.port)
        assert out.returncode == 0 and "wrote 12 memories" in out.stdout, out.stderr

        imported = run(fresh.home, "import", str(files[fmt]), port=fresh.port)  # format from the file name
        assert imported.returncode == 0 and "imported 12 memories (0 duplicates skipped)" in imported.stdout, \
            imported.stderr
        assert listing(fresh.get, project) == listing(daemon.get, project), fmt

    for fmt, path in files.items():  # a second import, and the source home reading its own export
        for target in (fresh, daemon):
            again = run(target.home, "import", str(path), port=target.port)
            assert again.returncode == 0 and "imported 0 memories (12 duplicates skipped)" in again.stdout, fmt
    # Across formats: the CLAUDE.md of the JSON export's project is known by id to the fresh home.
    claude = tmp_path / "CLAUDE.md"
    run(daemon.home, "export", "-o", str(claude), "-f", "claude-md", "-p", f"port-json-{tag}", port=daemon.port)
    assert "imported 0 memories (12 duplicates skipped)" in run(fresh.home, "import", str(claude),
                                                                port=fresh.port).stdout
    for fmt in files:
        assert fresh.get("/api/memory", project=f"port-{fmt}-{tag}").json()["total"] == 12


def test_claude_md_puts_constraints_and_decisions_first_with_ids_in_comments(daemon, tmp_path):
    project = f"port-order-{uuid.uuid4().hex[:6]}"
    seed(daemon, project)
    text = "".join(daemon.get("/api/export", format="claude-md", project=project).iter_text())
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## Constraints", "## Decisions"]
    assert headings == ["## Constraints", "## Decisions", "## Facts", "## Gotchas", "## Preferences", "## Procedures"]
    ids = {m["id"] for m in daemon.get("/api/memory", project=project).json()["items"]}
    comments = [json.loads(line.strip()[len("<!-- kenning "):-len(" -->")])
                for line in text.splitlines() if line.strip().startswith("<!-- kenning {")]
    assert {c["id"] for c in comments} == ids and all(c["project"] == project for c in comments)
    constraint_block = text.split("## Constraints")[1].split("## Decisions")[0]
    assert constraint_block.count("\n- ") == 2 and "constraint about" in constraint_block


def test_export_route_streams_every_format(daemon):
    project = f"port-route-{uuid.uuid4().hex[:6]}"
    seed(daemon, project, count=6)
    with daemon.client() as http:
        answers = {fmt: http.get("/api/export", params={"format": fmt, "project": project})
                   for fmt in portable.EXPORT_FORMATS}
        for fmt, r in answers.items():
            assert r.status_code == 200 and r.headers["content-type"].startswith(portable.MEDIA_TYPES[fmt].split(";")[0])
            assert portable.FILE_NAMES[fmt] in r.headers["content-disposition"]
            records = portable.parse(r.text, fmt)
            assert sorted(rec.body["content"] for rec in records) == sorted(
                m["content"] for m in http.get("/api/memory", params={"project": project}).json()["items"])
        assert [m["id"] for m in json.loads(answers["json"].text)] == [
            json.loads(line)["id"] for line in answers["jsonl"].text.splitlines()]
        bad = http.get("/api/export", params={"format": "yaml"})
        assert bad.status_code == 422 and "format" in bad.json()["error"]
        # A forgotten memory is not exported.
        gone = http.get("/api/memory", params={"project": project, "limit": 1}).json()["items"][0]["id"]
        http.delete(f"/api/memory/{gone}")
        assert gone not in http.get("/api/export", params={"project": project}).text


HAND_WRITTEN = {
    "CLAUDE.md": """# CLAUDE.md

This file provides guidance to Claude Code.

## Rules
- Never run migrations by hand on {p}
  - use `make migrate` instead
- Prefer httpx over requests in {p}

## Commands
Run the {p} tests with:
```bash
# a comment, not a heading
make test
```
""",
    "AGENTS.md": """---
description: agent notes
---
## Gotchas
* The {p} cache must be warmed before benchmarks

<!-- an ordinary comment -->
The {p} API speaks JSON only.
""",
    ".cursorrules": """You are an expert in Python for {p}.
Always type-annotate public functions.

1. Keep {p} modules under 300 lines.
""",
}


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_hand_written_instruction_files_import_as_memories(daemon, tmp_path, name):
    project = f"port-hand-{uuid.uuid4().hex[:6]}"
    path = tmp_path / name
    path.write_text(HAND_WRITTEN[name].format(p=project))
    out = run(daemon.home, "import", str(path), "-p", project, port=daemon.port)
    expected = {
        "CLAUDE.md": {f"Never run migrations by hand on {project} - use `make migrate` instead": "constraint",
                      f"Prefer httpx over requests in {project}": "constraint",
                      "This file provides guidance to Claude Code.": None,
                      f"Run the {project} tests with: ```bash # a comment, not a heading make test ```": "procedural"},
        "AGENTS.md": {f"The {project} cache must be warmed before benchmarks": "gotcha",
                      f"The {project} API speaks JSON only.": "gotcha"},
        ".cursorrules": {f"You are an expert in Python for {project}. Always type-annotate public functions.": None,
                         f"Keep {project} modules under 300 lines.": None},
    }[name]
    assert out.returncode == 0 and f"imported {len(expected)} memories" in out.stdout, out.stderr
    source = f"import:{portable.detect_format(name, '')}"  # (the pipeline may add facts it extracts from them)
    stored = {m["content"]: m for m in daemon.get("/api/memory", project=project).json()["items"]
              if m["source"] == source}
    assert set(stored) == set(expected)
    assert all(stored[c]["type"] == kind for c, kind in expected.items() if kind)
    again = run(daemon.home, "import", str(path), "-p", project, port=daemon.port)
    assert f"imported 0 memories ({len(expected)} duplicates skipped)" in again.stdout


def test_format_can_be_forced(daemon, tmp_path):
    project = f"port-forced-{uuid.uuid4().hex[:6]}"
    path = tmp_path / "notes.txt"
    path.write_text('{"content": "this line is a rule, not JSON"}\n')
    out = run(daemon.home, "import", str(path), "--format", "cursorrules", "-p", project, port=daemon.port)
    assert out.returncode == 0 and "imported 1 memories" in out.stdout, out.stderr
    [memory] = daemon.get("/api/memory", project=project).json()["items"]
    assert memory["content"] == '{"content": "this line is a rule, not JSON"}'


BAD_FILES = {
    "array-item.json": (lambda p: json.dumps([{"content": f"{p} ok", "project": p},
                                              {"content": f"{p} bad", "project": p, "type": "bogus"}]),
                        "array-item.json:item 2: unknown memory type"),
    "not-array.json": (lambda p: json.dumps({"content": p}), "not-array.json:1: a JSON export is an array"),
    "broken.json": (lambda p: '[{"content": "x"},\n  {oops}]', "broken.json:2: not JSON"),
    "CLAUDE.md": (lambda p: f"## Rules\n- {p} fine\n- {p} broken\n  <!-- kenning {{not json}} -->\n",
                  "CLAUDE.md:4: the kenning comment is not JSON"),
    "AGENTS.md": (lambda p: f"- {p} fine\n- {p} bad id\n  <!-- kenning {{\"id\": \"no spaces allowed\"}} -->\n",
                  "AGENTS.md:2: id"),
    "export.jsonl": (lambda p: json.dumps({"content": f"{p} x", "project": p, "colour": "red"}),
                     "export.jsonl:1: colour"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_bad_files_are_refused_whole_with_one_line(daemon, tmp_path, name):
    project = f"port-bad-{uuid.uuid4().hex[:6]}"
    make, expected = BAD_FILES[name]
    path = tmp_path / name
    path.write_text(make(project))
    out = run(daemon.home, "import", str(path), port=daemon.port)
    assert out.returncode == 2 and expected in out.stderr and "nothing was imported" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert daemon.get("/api/memory", project=project).json()["total"] == 0
    assert not [m for m in daemon.get("/api/memory", limit=200).json()["items"] if project in m["content"]]


def test_unknown_format_and_binary_file_are_clear_errors(daemon, tmp_path):
    path = tmp_path / "CLAUDE.md"
    path.write_bytes(b"\xff\xfe\x00binary")
    out = run(daemon.home, "import", str(path), port=daemon.port)
    assert out.returncode == 2 and "not UTF-8" in out.stderr
    out = run(daemon.home, "import", str(path), "--format", "yaml", port=daemon.port)
    assert out.returncode == 2 and "unknown format 'yaml'" in out.stderr
    out = run(daemon.home, "export", "-o", str(tmp_path / "x"), "-f", "yaml", port=daemon.port)
    assert out.returncode == 2 and not (tmp_path / "x").exists()


def _memory(i: int, kind: str, content: str) -> Memory:
    return Memory(id=f"m{i}", content=content, normalized_content=content.lower(), content_hash=str(i), type=kind,
                  importance=0.5 + i / 100, project="p", tags=["a>b"], created_at="2024-01-01T00:00:00Z")


def test_markdown_rendering_survives_markup_in_content():
    tricky = ["- looks like a bullet", "# looks like a heading", "ends a comment --> and opens <!-- one",
              "```fence", "1. numbered"]
    memories = [_memory(i, kind, text) for i, (kind, text) in enumerate(zip(("fact", "decision", "gotcha",
                                                                             "constraint", "fact"), tricky))]
    sections = [(kind, [m for m in memories if m.type == kind]) for kind in portable.section_order(
        m.type for m in memories)]
    text = "".join(portable.render_markdown("claude-md", sections, project="p"))
    records = portable.parse(text, "claude-md")
    assert sorted((r.body["id"], r.body["content"], r.body["type"], tuple(r.body["tags"])) for r in records) == \
        sorted((m.id, m.content, m.type, ("a>b",)) for m in memories)


def test_format_detection():
    assert portable.detect_format("CLAUDE.md", "") == "claude-md"
    assert portable.detect_format("CLAUDE.local.md", "") == "claude-md"
    assert portable.detect_format("AGENTS.md", "") == "agents-md"
    assert portable.detect_format(".cursorrules", "") == "cursorrules"
    assert portable.detect_format("rules.mdc", "") == "cursorrules"
    assert portable.detect_format("x.ndjson", "") == "jsonl"
    assert portable.detect_format("dump", ' [{"content": "x"}]') == "json"
    assert portable.detect_format("dump", '{"content": "x"}') == "jsonl"
    assert portable.detect_format("notes", "- a rule") == "markdown"
