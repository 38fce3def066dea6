"""Scale-out on PostgreSQL (issue 36): two real daemons on one database, as behind any HTTP balancer.

Every extract job is claimed by exactly one of them (`FOR UPDATE SKIP LOCKED`: the two daemons'
processed counts add up to the number of jobs, each leased once), what is written through one
daemon is read and recalled through the other, and a session started on one goes on through the
other (no daemon keeps it to itself).
"""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from bench.harnesses.daemon import start_daemon

MEMORIES = 24


@pytest.fixture
def two_daemons(pg_server, pg_template, tmp_path_factory):
    url = pg_server.create_database(f"scale{uuid.uuid4().hex[:10]}", template=pg_template)
    config = (f"store:\n  backend: postgres\n  url: {url}\n"
              "pipeline:\n  worker:\n    poll_ms: 100\n    backoff_base_ms: 10\n    backoff_cap_ms: 100\n")
    homes = [tmp_path_factory.mktemp(f"scale-{i}") for i in (1, 2)]
    for home in homes:
        (home / "config.yaml").write_text(config)
    daemons = [start_daemon(home) for home in homes]
    yield daemons, url
    for daemon in daemons:
        daemon.stop()


def _extract_jobs(url: str, ids: list[str]) -> list[tuple[str, int, str | None]]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT status, attempts, leased_by FROM memory_jobs WHERE job_type = 'extract'"
                            " AND memory_id = ANY(%s)", (ids,)).fetchall()


def _processed(daemon) -> int:
    with daemon.client() as http:
        return int(http.get("/api/pipeline/status").json()["workers"]["extraction"]["processed"])


def test_two_daemons_on_one_database_claim_each_job_once_and_see_each_others_writes(two_daemons):
    daemons, url = two_daemons
    project = f"scale-{uuid.uuid4().hex[:6]}"
    before = [_processed(d) for d in daemons]

    def write(i: int) -> tuple[str, str, int]:
        content = f"Service {i} of {project} deploys with blue-green switch number {i * 17}; keep the old pool warm."
        with daemons[i % 2].client() as http:
            answer = http.post("/api/memory/remember", json={"content": content, "project": project})
        assert answer.status_code == 200, answer.text
        return answer.json()["id"], content, i % 2

    with ThreadPoolExecutor(8) as pool:
        written = list(pool.map(write, range(MEMORIES)))
    ids = [w[0] for w in written]
    assert len(set(ids)) == MEMORIES

    for memory_id, content, stored_by in written:  # each write, read through the other daemon
        with daemons[1 - stored_by].client() as http:
            got = http.get(f"/api/memory/{memory_id}")
        assert got.status_code == 200 and got.json()["content"] == content
    with daemons[1].client() as http:
        found = http.post("/api/memory/recall", json={"query": f"service 3 of {project} blue-green",
                                                      "project": project, "limit": 5}).json()["results"]
    assert written[3][0] in {h["id"] for h in found}  # written through daemon B (3 % 2), recalled through B
    with daemons[0].client() as http:
        found = http.post("/api/memory/recall", json={"query": f"service 3 of {project} blue-green",
                                                      "project": project, "limit": 5}).json()["results"]
    assert written[3][0] in {h["id"] for h in found}

    deadline = time.monotonic() + 240  # both daemons' extraction workers drain the one queue
    while time.monotonic() < deadline:
        jobs = _extract_jobs(url, ids)
        if len(jobs) == MEMORIES and all(status == "completed" for status, _, _ in jobs):
            break
        time.sleep(0.5)
    jobs = _extract_jobs(url, ids)
    assert len(jobs) == MEMORIES and {status for status, _, _ in jobs} == {"completed"}, jobs
    assert all(attempts == 1 for _, attempts, _ in jobs), jobs  # leased once each
    after = [_processed(d) for d in daemons]
    assert sum(a - b for a, b in zip(after, before)) == MEMORIES  # no job ran on both daemons


def _recorded(client, key: str, *, prompts: int, timeout_s: float = 60.0) -> None:
    """Wait until the session shows its project and `prompts` prompts: under load an injecting hook
    answers empty (degraded) at its latency budget while its work goes on and is stored after."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        detail = client.get(f"/api/sessions/{key}")
        if detail.status_code == 200 and detail.json()["session"]["project"] and len(detail.json()["prompts"]) == prompts:
            return
        time.sleep(0.2)


def test_a_session_started_on_one_daemon_goes_on_through_the_other(two_daemons):
    (first, second), _ = two_daemons
    key = f"balanced-{uuid.uuid4().hex[:8]}"
    project = f"sess-{uuid.uuid4().hex[:6]}"
    with first.client() as a, second.client() as b:
        assert a.post("/api/hooks/session-start", json={"session_key": key, "harness": "claude-code",
                                                         "project": project, "cwd": f"/src/{project}"}).status_code == 200
        assert b.post("/api/hooks/user-prompt-submit", json={"session_key": key,
                                                             "prompt": "how do we roll back a deploy?"}).status_code == 200
        assert a.post("/api/hooks/user-prompt-submit", json={"session_key": key,
                                                             "prompt": "and the database migration?"}).status_code == 200
        _recorded(a, key, prompts=2)  # a hook answered past its latency budget still records, a moment later
        seen_by_b = b.get(f"/api/sessions/{key}")
        seen_by_a = a.get(f"/api/sessions/{key}")
    assert seen_by_a.status_code == seen_by_b.status_code == 200
    assert seen_by_a.json() == seen_by_b.json()
    detail = seen_by_b.json()
    assert detail["session"]["project"] == project
    assert len(detail["prompts"]) == 2  # one prompt through each daemon, both in the one session
