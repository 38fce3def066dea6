"""`kenning ingest git` (issue 10): real temporary git repositories, the shared real daemon over
HTTP, and the CLI as a user runs it. Each test works in its own project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx

from kenning.memory.git_history import parse_log, read_commits
from bench.harnesses.daemon import free_port

KENNING = str(Path(sys.executable).with_name("kenning"))


class Repo:
    """A real git repository; commits carry fixed author and committer dates."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str, date: str | None = None, stdin: bytes | None = None) -> str:
        env = {**os.environ, "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.invalid",
               "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.invalid"}
        if date:
            env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        done = subprocess.run(["git", "-C", str(self.path), *args], env=env, input=stdin, capture_output=True,
                              check=True)
        return done.stdout.decode(errors="replace").strip()

    def commit(self, files: dict[str, str], message: bytes | str, date: str) -> str:
        for name, text in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            self.git("add", name)
        raw = message.encode() if isinstance(message, str) else message
        self.git("commit", "-q", "-F", "-", date=date, stdin=raw)
        return self.git("rev-parse", "HEAD")


def memories(http: httpx.Client, project: str, source: str | None = "git") -> list[dict]:
    """The project's memories written by git ingest: the commits (source 'git'), or with `source` another
    writer's ('git-rule': rules stated in commit bodies), or None for all."""
    page = http.get("/api/memory", params={"project": project, "limit": 500}).json()
    return [m for m in page["items"] if source is None or m["source"] == source]


def ingest(http: httpx.Client, path: Path | str, project: str) -> httpx.Response:
    return http.post("/api/ingest/git", json={"path": str(path), "project": project, "wait": True}, timeout=300)


def test_ingest_is_incremental_skips_merges_and_keeps_dates_files_and_sha(daemon, tmp_path):
    repo = Repo(tmp_path / "service")
    first = repo.commit({"retry.py": "MAX = 7\n"},
                        "fix: cap retries at 7\n\nMeasured against the upstream rate-limit window;\n"
                        "do not round it up to 10.", "2021-03-04T05:06:07+02:00")
    repo.git("checkout", "-q", "-b", "side")
    side = repo.commit({"docs/notes.md": "notes\n"}, "docs: explain the retry budget", "2021-03-05T10:00:00Z")
    repo.git("checkout", "-q", "main")
    main_two = repo.commit({"backoff.py": "BASE = 0.1\n"}, "backoff: base delay 0.1 s", "2021-03-06T10:00:00Z")
    repo.git("merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side", date="2021-03-07T10:00:00Z")
    project = "git-incremental"
    with daemon.client(timeout=300) as http:
        run = ingest(http, repo.path, project)
        assert run.status_code == 200, run.text
        body = run.json()
        assert (body["status"], body["created"], body["skipped_known"]) == ("done", 3, 0)
        stored = {m["metadata"]["sha"]: m for m in memories(http, project)}
        assert set(stored) == {first, side, main_two}  # the merge commit is not a memory
        cap = stored[first]
        assert cap["content"].startswith("fix: cap retries at 7")  # subject, then the body (the rationale)
        assert "Measured against the upstream rate-limit window; do not round it up to 10." in cap["content"]
        assert cap["source"] == "git" and cap["related_files"] == ["retry.py"]
        # a commit stays a commit (issue 31): typed `commit`, never `constraint` — "fix: cap retries at 7" is
        # what was done; the rule its body states goes through the claim test with the commit as evidence
        assert {m["type"] for m in stored.values()} == {"commit"} and all(m["applies"] is None for m in stored.values())
        rules = memories(http, project, "git-rule")
        assert [r["content"] for r in rules] == ["Measured against the upstream rate-limit window; do not round it up to 10."]
        assert rules[0]["type"] == "constraint" and rules[0]["derived_from"] == [cap["id"]]
        assert rules[0]["metadata"]["claim"]["commit"] == first and rules[0]["related_files"] == ["retry.py"]
        assert cap["created_at"] == "2021-03-04T03:06:07.000Z"  # the commit's date, in UTC
        assert stored[side]["related_files"] == ["docs/notes.md"]
        jobs = http.get("/api/pipeline/jobs", params={"memory_id": cap["id"]}).json()["items"]
        assert jobs == []  # a commit is one record: no extraction job splits it into fragments

        key = "sk-proj-" + "Q7x" * 12
        later = repo.commit({"retry.py": "MAX = 7  # measured\n", "README.md": "retry budget\n"},
                            f"docs: note why MAX is 7\n\nRotated the test key {key} too.", "2021-04-01T12:00:00Z")
        again = ingest(http, repo.path, project).json()
        assert (again["created"], again["skipped_known"], again["total"]) == (1, 3, 1)
        stored = {m["metadata"]["sha"]: m for m in memories(http, project)}
        assert len(stored) == 4 and sorted(stored[later]["related_files"]) == ["README.md", "retry.py"]
        assert key not in stored[later]["content"] and "REDACTED" in stored[later]["content"]  # the write path's secrets policy
        assert ingest(http, repo.path, project).json()["created"] == 0

        repos = {r["repo"]: r for r in http.get("/api/ingest/git").json()["repositories"]}
        assert repos[str(repo.path.resolve())]["commit_count"] == 4


def test_odd_messages_and_encodings_are_read_not_refused(tmp_path):
    repo = Repo(tmp_path / "odd")
    latin = repo.commit({"a.txt": "a"}, "caf\xe9: latin-1 bytes\n\nna\xefve body".encode("latin-1"),
                        "2020-01-01T00:00:00Z")
    weird = repo.commit({"b b.txt": "b", "ünï.txt": "u"}, "subject with \x1f unit separator\n\n\n\nbody",
                        "2020-01-02T00:00:00Z")
    commits = {c.sha: c for c in read_commits(str(repo.path), [weird, latin])}
    assert [c.sha for c in read_commits(str(repo.path), [weird, latin])] == [latin, weird]  # oldest first
    assert commits[latin].subject.startswith("caf") and "latin-1 bytes" in commits[latin].subject
    assert sorted(commits[weird].files) == ["b b.txt", "ünï.txt"]
    assert "unit separator" in commits[weird].subject + commits[weird].body
    assert parse_log(b"") == []


def test_bad_paths_are_400_with_an_error_and_store_nothing(daemon, tmp_path):
    plain = tmp_path / "not-a-repo"
    plain.mkdir()
    with daemon.client() as http:
        for path in (plain, tmp_path / "missing"):
            response = ingest(http, path, "git-bad")
            assert response.status_code == 400
            assert str(path) in response.json()["error"]
        assert http.post("/api/ingest/git", json={"path": ""}).status_code == 422
        assert http.get("/api/ingest/git/nope").status_code == 404
        assert memories(http, "git-bad") == []


def run_cli(daemon, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**daemon.env, "HOME": str(daemon.home)}
    return subprocess.run([KENNING, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_cli_ingests_through_the_daemon_and_fails_in_one_line(daemon, tmp_path):
    repo = Repo(tmp_path / "cli-repo")
    sha = repo.commit({"x.py": "x = 1\n"}, "feat: x is one\n\nBecause two was too many.", "2022-02-02T02:02:02Z")
    out = run_cli(daemon, "ingest", "git", str(repo.path / "."), "--json")  # project: the folder name
    assert out.returncode == 0, out.stderr
    run = json.loads(out.stdout)
    assert (run["status"], run["created"], run["project"]) == ("done", 1, "cli-repo")
    with daemon.client() as http:
        assert [m["metadata"]["sha"] for m in memories(http, "cli-repo")] == [sha]

    bad = run_cli(daemon, "ingest", "git", str(tmp_path))
    assert bad.returncode == 2 and "not a git repository" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_cli_without_a_daemon_ingests_into_the_local_store(tmp_path):
    repo = Repo(tmp_path / "local-repo")
    repo.commit({"z.py": "z = 3\n"}, "feat: z is three", "2022-04-04T04:04:04Z")
    env = {**os.environ, "KENNING_HOME": str(tmp_path / "home"), "KENNING_PORT": str(free_port())}
    run = lambda *args: subprocess.run([KENNING, *args], env=env, capture_output=True, text=True, timeout=300)
    first = run("ingest", "git", str(repo.path), "-p", "local", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["created"] == 1
    repo.commit({"z.py": "z = 4\n"}, "fix: z is four", "2022-04-05T04:04:04Z")
    second = run("ingest", "git", str(repo.path), "-p", "local")
    assert second.returncode == 0 and "ingested 1 new commit(s)" in second.stdout and "1 already known" in second.stdout
    listed = json.loads(run("list", "-p", "local", "--json").stdout)
    assert sorted(m["content"].split(" (commit")[0] for m in listed["items"]) == ["feat: z is three", "fix: z is four"]


def test_connect_claude_code_offers_the_history_without_asking(daemon, tmp_path):
    repo = Repo(tmp_path / "connected")
    repo.commit({"y.py": "y = 2\n"}, "feat: y", "2022-03-03T03:03:03Z")
    settings = tmp_path / "settings.json"
    offered = run_cli(daemon, "connect", "claude-code", "--settings", str(settings), cwd=repo.path)
    assert offered.returncode == 0, offered.stderr
    assert f"kenning ingest git {repo.path.resolve()}" in offered.stdout
    ran = run_cli(daemon, "connect", "claude-code", "--settings", str(settings), "--ingest-git", cwd=repo.path)
    assert ran.returncode == 0, ran.stderr
    assert "ingested 1 commit(s)" in ran.stdout
    outside = run_cli(daemon, "connect", "claude-code", "--settings", str(settings), "--ingest-git", cwd=tmp_path)
    assert outside.returncode == 2 and "not inside a git repository" in outside.stderr


def test_a_repository_without_commits_ingests_nothing(daemon, tmp_path):
    repo = Repo(tmp_path / "empty")
    with daemon.client() as http:
        body = ingest(http, repo.path, "git-empty").json()
    assert (body["status"], body["total"], body["created"]) == ("done", 0, 0)


def test_a_rule_keyed_on_a_file_a_commit_deletes_goes_stale_with_that_commit(daemon, tmp_path):
    """Issue 31: git ingest sees a deletion (--name-status) and marks the area rules keyed on that file
    stale, the commit as evidence; a file renamed away does the same; review lists them."""
    repo = Repo(tmp_path / "legacy")
    repo.commit({"ledger/export.py": "ROUND = 'down'\n", "ledger/fmt.py": "SEP = ';'\n"}, "ledger: export and format",
                "2021-01-01T00:00:00Z")
    project = "legacy-ledger"
    with daemon.client(timeout=300) as http:
        assert ingest(http, repo.path, project).status_code == 200
        rules = [http.post("/api/memory/remember", json={
            "content": text, "type": "constraint", "project": project, "applies": "area", "area": path,
            "related_files": [path]}).json()["id"] for text, path in (
            ("The export rounds half-cents down to match the legacy ledger", "ledger/export.py"),
            ("Fields are separated by semicolons for the ERP", "ledger/fmt.py"))]
        repo.git("rm", "-q", "ledger/export.py")
        repo.git("mv", "ledger/fmt.py", "ledger/format.py")
        gone = repo.commit({}, "ledger: drop the legacy export, rename fmt", "2021-02-01T00:00:00Z")
        assert ingest(http, repo.path, project).json()["created"] == 1
        deleted, renamed = (http.get(f"/api/memory/{r}").json() for r in rules)
        assert deleted["stale_at"] and deleted["metadata"]["stale"] == {
            "commit": gone, "path": "ledger/export.py", "symbol": None, "reason": "deleted"}
        assert renamed["stale_at"] and renamed["metadata"]["stale"]["reason"] == "renamed to ledger/format.py"
        listed = http.get("/api/review", params={"status": "stale", "project": project}).json()
        assert {m["id"] for s in listed["sessions"] for m in s["memories"]} == set(rules)
