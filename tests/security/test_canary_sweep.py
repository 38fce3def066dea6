"""Secrets nowhere (issue 26): canary secrets written through every write path — remember, batch,
import, MCP, hooks (real hook processes, a Claude Code 2.1.328-format transcript, a prompt, a tool
step, the session-start context the predictor records), documents, git ingest — then every table
of the database and every file under KENNING_HOME (memories.db, -wal, -shm, logs, spool) is
searched for each canary: 0 hits. The canaries are the kinds the issue found stored in clear: a
bare AWS secret access key after a `secret` label, an `AKIA…:secret` pair, a high-entropy token
in assignment position, plus a GitHub token and a password; and issue 33's shapes: a JWT whole, a
URL password with an empty user, `curl -u user:pw`, `--password pw`, `mysql -p…`, a token typed as
a project name — found in no table, no full-text term, no file, and not in the spool a hook writes
while the daemon is away."""

from __future__ import annotations

import base64
import json
import os
import random
import re
import sqlite3
import string
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
from tests.api.test_secrets_api import _mcp_store, run_mcp
from bench.harnesses.daemon import start_daemon
from bench.harnesses.claude_format import payload, write_session

KENNING = str(Path(sys.executable).with_name("kenning"))
HOOK = [sys.executable, "-m", "kenning.hooks"]


def _rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    while True:
        token = "".join(random.choice(alphabet) for _ in range(n))
        if any(c.isupper() for c in token) and any(c.islower() for c in token) and any(c.isdigit() for c in token):
            return token


def canaries() -> dict[str, str]:
    """Unique fake secrets (unique so dedupe never hides a write)."""
    return {
        "aws-id": "AKIA" + "".join(random.choice(string.ascii_uppercase + string.digits) for _ in range(16)),
        "aws-secret": _rand(38) + "/+",
        "pair-secret": _rand(36) + "+9/Q",
        "entropy-token": _rand(32),
        "github-token": "ghp_" + _rand(36),
        "password": "Cnry" + _rand(10) + "!7",
        # issue 33's shapes: a JWT whole (its payload and signature), a URL password with an empty user,
        # `curl -u user:pw`, `--password pw`, `mysql -p pw`, and a token typed as a project name
        "jwt-payload": _b64url(json.dumps({"sub": _rand(12), "exp": 1900000000})),
        "jwt-signature": _rand(43),
        "redis-password": "Rds" + _rand(14),
        "curl-password": "Crl" + _rand(14),
        "flag-password": "Flg" + _rand(14),
        "mysql-password": "Msq" + _rand(14),
        "project-token": "ghp_" + _rand(36),
    }


def _b64url(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


JWT_HEADER = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}))


def jwt(c: dict[str, str]) -> str:
    return f"{JWT_HEADER}.{c['jwt-payload']}.{c['jwt-signature']}"


def secret_text(c: dict[str, str], where: str) -> str:
    return (f"{where}: we decided to deploy billing with key {c['aws-id']} and secret {c['aws-secret']}; "
            f"the CI uses {c['aws-id']}:{c['pair-secret']} and SIGNING_SALT={c['entropy-token']}; "
            f"push with {c['github-token']}; db password: {c['password']}; the session cookie was {jwt(c)}; "
            f"cache at redis://:{c['redis-password']}@cache.internal:6379/0; "
            f"run curl -u admin:{c['curl-password']} https://ci.internal/api; "
            f"then psql-sync --password {c['flag-password']} --host db; and mysql -u root -p{c['mysql-password']} billing")


def _hook(event: str, body: dict, env: dict[str, str]) -> None:
    result = subprocess.run(HOOK + [event], input=json.dumps(body).encode(), capture_output=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr


def _git_repo(path: Path, c: dict[str, str]) -> Path:
    path.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)
    (path / "README.md").write_text("billing\n")
    subprocess.run(["git", "-C", str(path), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(path), "commit", "-q", "-m", secret_text(c, "commit message")], check=True, env=env)
    return path


def table_hits(db_path: Path, needles: dict[str, str]) -> dict[str, list[str]]:
    """needle name → the tables holding it (every column of every row, as text)."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    hits: dict[str, list[str]] = {}
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        try:
            rows = conn.execute(f'SELECT * FROM "{table}"').fetchall()
        except sqlite3.DatabaseError:
            continue
        text = repr(rows)
        for name, needle in needles.items():
            if needle in text:
                hits.setdefault(name, []).append(table)
    conn.close()
    return hits


def fts_term_hits(db_path: Path, needles: dict[str, str]) -> dict[str, list[str]]:
    """needle name → the full-text indexes holding it as a term (fts5vocab: the terms themselves, which
    the index stores prefix-compressed, not as the text a table scan or a byte search would find)."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    hits: dict[str, list[str]] = {}
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%fts5%'"):
        conn.execute(f'CREATE VIRTUAL TABLE temp."v_{table}" USING fts5vocab(main, "{table}", row)')
        terms = {t for (t,) in conn.execute(f'SELECT term FROM temp."v_{table}"')}
        for name, needle in needles.items():
            parts = [p.lower() for p in re.split(r"[^A-Za-z0-9]+", needle) if len(p) >= 8]
            if any(p in terms for p in parts):
                hits.setdefault(name, []).append(table)
    conn.close()
    return hits


def file_hits(home: Path, needles: dict[str, str]) -> dict[str, list[str]]:
    hits: dict[str, list[str]] = {}
    for path in home.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        for name, needle in needles.items():
            if needle.encode() in data:
                hits.setdefault(name, []).append(str(path.relative_to(home)))
    return hits


@pytest.fixture
def world(tmp_path):
    user = tmp_path / "user"
    (user / ".claude" / "projects").mkdir(parents=True)
    daemon = start_daemon(tmp_path / "kenning", "sessions:\n  latency_budget_ms: 20000\n", {"HOME": str(user)})
    yield tmp_path, user, daemon
    daemon.stop()


def test_canary_secrets_reach_no_table_and_no_file(world):
    base, user, daemon = world
    c = canaries()
    project = f"canary-{uuid.uuid4().hex[:6]}"
    env = {**os.environ, **daemon.env, "HOME": str(user)}
    with daemon.client(timeout=300) as http:
        assert http.post("/api/memory/remember", json={  # remember
            "content": secret_text(c, "remember"), "project": project,
            "tags": [f"salt={c['entropy-token']}"], "metadata": {"env": secret_text(c, "metadata")}}).status_code == 200
        assert http.post("/api/memory/remember", json={  # a token typed as a project name
            "content": f"the {c['project-token'][:8]} project notes", "project": c["project-token"],
            "tags": [c["project-token"]]}).status_code == 200
        assert http.post("/api/memory/batch", json={"memories": [  # batch
            {"content": secret_text(c, "batch"), "project": project}]}).status_code == 200
        jsonl = base / "import.jsonl"  # import (CLI, through the daemon)
        jsonl.write_text(json.dumps({"content": secret_text(c, "import"), "project": project}) + "\n")
        out = subprocess.run([KENNING, "import", str(jsonl)], env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        run_mcp(_mcp_store, env, secret_text(c, "mcp"), project)  # MCP
        assert http.post("/api/documents", json={  # documents
            "text": secret_text(c, "document"), "title": f"runbook {c['aws-id']}", "project": project,
            "wait": True}).status_code == 200
        repo = _git_repo(base / "billing", c)  # git ingest
        assert http.post("/api/ingest/git", json={"path": str(repo), "project": project, "wait": True}).status_code == 200

        # hooks: a real Claude Code-format session with the secrets in prompts, a tool step and answers
        key = str(uuid.uuid4())
        turns = [(secret_text(c, "prompt one"), secret_text(c, "answer one")),
                 ("and the merge policy?", "From now on we always squash merge; " + secret_text(c, "answer two"))]
        transcript = write_session(user / ".claude" / "projects", str(repo), key, turns)
        _hook("session-start", payload("session-start", key, str(repo), str(transcript)), env)
        assert http.post("/api/hooks/session-start", json={  # a context the predictor records
            "session_key": key + "-ctx", "project": project, "context": secret_text(c, "context")}).status_code == 200
        _hook("user-prompt-submit", payload("user-prompt-submit", key, str(repo), str(transcript),
                                            prompt=secret_text(c, "typed prompt")), env)
        _hook("post-tool-use", {**payload("stop", key, str(repo), str(transcript)), "hook_event_name": "PostToolUse",
                                "tool_name": "Bash", "tool_input": {"command": f"export {secret_text(c, 'cmd')}"},
                                "tool_response": {"stdout": secret_text(c, "tool output"), "stderr": "", "exit_code": 1}},
              env)
        _hook("pre-compact", payload("pre-compact", key, str(repo), str(transcript)), env)
        _hook("session-end", payload("session-end", key, str(repo), str(transcript)), env)
        http.post("/api/hooks/session-end", json={"session_key": key + "-ctx", "wait": True})

        end = time.monotonic() + 180
        while time.monotonic() < end:  # the summary job and the pipeline's jobs have run
            job = (http.get(f"/api/sessions/{key}").json().get("summary_job") or {}).get("status")
            totals = http.get("/api/pipeline/status").json()["queue"]["totals"]
            if job == "done" and not totals["pending"] and not totals["leased"]:
                break
            time.sleep(1)
        detail = http.get(f"/api/sessions/{key}").json()
        assert detail["transcript"] and len(detail["prompts"]) >= 1 and detail["created"], detail
        shown = json.dumps(detail) + http.get(f"/api/sessions/{key}/transcript").text
        shown += http.get("/api/export", params={"format": "json"}).text
        entities = http.get("/api/graph/entities", params={"limit": 1000}).json()
        assert not [e for e in json.dumps(entities).split('"name": ')[1:] if "REDACTED" in e.split(",")[0]]
        shown += json.dumps(entities)
        shown += json.dumps(http.get("/api/memory", params={"limit": 500}).json())
    db = daemon.home / "memories.db"
    ctx = sqlite3.connect(f"file:{db}?mode=ro", uri=True).execute(
        "SELECT context_text FROM predictor_session_context WHERE session_key = ?", (key + "-ctx",)).fetchone()
    assert ctx is not None and "[REDACTED" in ctx[0]  # the predictor's context row was written, redacted
    assert "[REDACTED:aws-secret-key]" in shown and "[REDACTED:secret]" in shown
    needles = {k: v for k, v in c.items()}
    assert {k: v for k, v in needles.items() if v in shown} == {}, "shown by the API"
    assert table_hits(db, needles) == {}
    assert fts_term_hits(db, needles) == {}
    assert file_hits(daemon.home, needles) == {}

    # while the daemon is away, a hook spools the prompt and the tool output: redacted before they wait on disk
    laptop = base / "laptop"
    away = {**env, "KENNING_HOME": str(laptop), "KENNING_URL": "http://127.0.0.1:9", "KENNING_HOOK_TIMEOUT": "1"}
    _hook("user-prompt-submit", payload("user-prompt-submit", key, str(repo), str(transcript),
                                        prompt=secret_text(c, "spooled prompt")), away)
    _hook("post-tool-use", {**payload("stop", key, str(repo), str(transcript)), "hook_event_name": "PostToolUse",
                            "tool_name": "Bash", "tool_input": {"command": secret_text(c, "spooled cmd")},
                            "tool_response": {"stdout": secret_text(c, "spooled output"), "exit_code": 0}}, away)
    spooled = list((laptop / "spool").glob("e-*.json"))
    assert len(spooled) == 2 and "[REDACTED:jwt]" in spooled[0].read_text()
    assert file_hits(laptop, needles) == {}

    daemon.stop()  # and once the daemon has checkpointed and closed the files
    assert file_hits(daemon.home, needles) == {}
