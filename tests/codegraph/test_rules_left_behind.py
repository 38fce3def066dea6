"""Issue 31: an area rule is about the code it names; when that code goes, the rule goes stale.

A real git repository, the real code index and the real service: a rule naming `normalize_host` is an area
rule linked to hosts.py (not a session opener; the step that reads hosts.py shows it). A commit removes
the function; the index sees it and the rule gets stale_at with that commit as evidence; it is held from
session start, the step and a prompt's unasked answer, and listed in review until the user confirms it.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from kenning.core.events import PromptSubmitted, SessionStarted
from kenning.core.types import MemoryDraft
from kenning.observer import decider
from kenning.observer.scratchpad import Scratchpad, StepContext
from kenning.sessions import ranking

HOSTS = ("def normalize_host(name):\n    return name.rstrip('.').lower()\n\n\n"
         "def split_port(host):\n    return host.rsplit(':', 1)\n")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@example.invalid", "HOME": str(repo), "PATH": "/usr/bin:/bin"})
    return done.stdout.strip()


def _step(kenning, project: str, key: str, path: str) -> list[str]:
    pad = Scratchpad(key, project=project, cwd="/nowhere")
    ctx = StepContext(tool="Read", files=[path])
    return decider.decide(kenning.db, kenning.settings.observer, pad, ctx, kenning.settings.sessions.ranking).ids


def test_a_rule_goes_stale_when_its_function_is_removed_in_a_commit(kenning, tmp_path):
    repo = tmp_path / "netkit"
    (repo / "netkit").mkdir(parents=True)
    (repo / "netkit" / "hosts.py").write_text(HOSTS)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "hosts: normalize and split")
    project = "netkit"
    kenning.code_index(repo, project)
    rule = kenning.remember(MemoryDraft("`normalize_host` must strip the single trailing dot before matching",
                                        type="constraint", type_explicit=True, project=project,
                                        created_at="2026-01-01T00:00:00Z")).id
    branch = kenning.remember(MemoryDraft("Never push to main; every change goes through a pull request",
                                          type="constraint", type_explicit=True, project=project,
                                          created_at="2026-01-01T00:00:00Z")).id
    stored = kenning.get(rule)
    assert (stored.applies, stored.area) == ("area", "normalize_host")
    assert "netkit/hosts.py" in stored.related_files  # the linked file: the step keys on it
    assert kenning.get(branch).applies == "project"

    start = kenning.sessions.session_start(SessionStarted(session_key="s1", project=project,
                                                          timestamp="2026-05-01T09:00:00Z"))
    assert branch in start["memory_ids"] and rule not in start["memory_ids"]  # an area rule waits for its area
    assert rule in _step(kenning, project, "s1", "netkit/hosts.py")  # reading the file shows it

    (repo / "netkit" / "hosts.py").write_text("def split_port(host):\n    return host.rsplit(':', 1)\n")
    _git(repo, "commit", "-q", "-am", "hosts: drop normalize_host, callers lower-case themselves")
    removed_in = _git(repo, "rev-parse", "HEAD")
    kenning.code_index(repo, project)

    gone = kenning.get(rule)
    assert gone.stale_at and gone.metadata["stale"]["commit"] == removed_in
    assert (gone.metadata["stale"]["path"], gone.metadata["stale"]["symbol"]) == ("netkit/hosts.py", "normalize_host")
    assert kenning.get(branch).stale_at is None
    history = [h for h in kenning.history(rule) if "stale_at" in (h.get("changes") or {})]
    assert history and history[-1]["actor"] == "code-index"
    judged = ranking.verdicts(kenning.db.reader(), [gone], "2026-05-02T00:00:00Z", kenning.settings.sessions.ranking)
    assert judged[rule][0] == "stale"
    assert rule not in _step(kenning, project, "s2", "netkit/hosts.py")  # held from the step
    prompt = kenning.sessions.user_prompt_submit(PromptSubmitted(session_key="s2",
                                                                 prompt="how does normalize_host treat the trailing dot?",
                                                                 timestamp="2026-05-02T09:01:00Z"))
    assert rule not in prompt["memory_ids"]  # nor a prompt's unasked answer, however well the query matches it

    pending = kenning.review.pending(status="stale", project=project)
    items = [m for s in pending["sessions"] for m in s["memories"]]
    assert [m["id"] for m in items] == [rule] and items[0]["stale"]["commit"] == removed_in
    assert rule in [m["id"] for s in kenning.review.pending(project=project)["sessions"] for m in s["memories"]]

    kenning.review.accept(rule)  # the user confirms: it still holds
    confirmed = kenning.get(rule)
    assert confirmed.stale_at is None and confirmed.user_verified
    assert kenning.review.pending(status="stale", project=project)["total"] == 0
    (repo / "netkit" / "hosts.py").write_text("def split_port(host):\n    return host.rsplit(':', 2)\n")
    kenning.code_index(repo, project)
    assert kenning.get(rule).stale_at is None  # confirmed for that same removal: not marked again


def test_a_rule_stored_before_the_index_gets_its_code_area_when_the_project_is_indexed(kenning, tmp_path):
    repo = tmp_path / "netkit"
    (repo / "netkit").mkdir(parents=True)
    (repo / "netkit" / "hosts.py").write_text(HOSTS)
    rule = kenning.remember(MemoryDraft("Whatever the caller sends, `split_port` splits on the last colon only",
                                        type="constraint", type_explicit=True, project="netkit")).id
    assert kenning.get(rule).related_files == []
    kenning.code_index(repo, "netkit")
    linked = kenning.get(rule)
    assert (linked.applies, linked.area, linked.related_files) == ("area", "split_port", ["netkit/hosts.py"])
    assert any(h["actor"] == "code-index" for h in kenning.history(rule))


def test_an_edit_that_removes_the_function_marks_its_rule_stale_through_the_hook(daemon, tmp_path):
    """The agent's own Edit (PostToolUse through a real daemon) re-indexes the file and the rule goes stale."""
    repo = tmp_path / "edgekit"
    (repo / "edgekit").mkdir(parents=True)
    hosts = repo / "edgekit" / "hosts.py"
    hosts.write_text(HOSTS)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "hosts")
    with daemon.client(timeout=120) as http:
        assert http.post("/api/code/index", json={"path": str(repo), "project": "edgekit"}).status_code == 200
        rule = http.post("/api/memory/remember", json={
            "content": "`normalize_host` must strip the single trailing dot before matching", "type": "constraint",
            "project": "edgekit"}).json()["id"]
        assert http.get(f"/api/memory/{rule}").json()["applies"] == "area"
        hosts.write_text("def split_port(host):\n    return host.rsplit(':', 1)\n")  # the agent's edit
        r = http.post("/api/hooks/post-tool-use", json={
            "session_key": "edit-1", "cwd": str(repo), "tool_name": "Edit",
            "tool_input": {"file_path": str(hosts), "old_string": "def normalize_host", "new_string": ""},
            "tool_response": {"filePath": str(hosts)}})
        assert r.status_code == 200, r.text
        deadline = time.monotonic() + 120  # re-indexed off the hook's call (issue 34): the graph catches up
        stale = http.get(f"/api/memory/{rule}").json()
        while not stale["stale_at"] and time.monotonic() < deadline:
            time.sleep(0.2)
            stale = http.get(f"/api/memory/{rule}").json()
    assert stale["stale_at"] and stale["metadata"]["stale"]["symbol"] == "normalize_host"
    assert stale["metadata"]["stale"]["commit"] == _git(repo, "rev-parse", "HEAD")  # the work tree's HEAD then
