"""Existing stores lose their old secrets (issue 26 follow-up): a store written before the
scanner's new rules — rows put in place the way the old code stored them (no scan where the old
code did not scan; memories, FTS, history, hints, entities, attributes, mentions, jobs, documents,
sessions, prompts, transcripts, checkpoints, predictor context, observer rows) — is opened by a
real daemon of the new code: migration m005 re-runs the scanner, and no canary is left in any
table or in the database files (memories.db, -wal, -shm; FTS terms included, case-folded) while
it runs and after it has stopped. Nothing but the entity named after a secret is deleted, and each
changed memory says so in its history."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import httpx
import pytest

from kenning.core.clock import now_iso
from kenning.core.text import normalize_content
from kenning.store.db import open_database
from kenning.store.migrations import migrate
from bench.harnesses.daemon import start_daemon
from tests.security.test_canary_sweep import canaries, file_hits, secret_text, table_hits

AT = now_iso()  # recent: retention leaves these rows alone


def _memory(conn, rid: int, memory_id: str, text: str, tags: list[str], metadata: dict) -> None:
    norm = normalize_content(text)
    conn.execute(
        "INSERT INTO memories(rid, id, content, normalized_content, content_hash, tags, project, metadata,"
        " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 'billing', ?, ?, ?)",
        (rid, memory_id, norm.storage, norm.normalized, norm.content_hash, json.dumps(tags), json.dumps(metadata),
         AT, AT))
    conn.execute("INSERT INTO embeddings(content_hash, model, dims, vector, created_at) VALUES (?, 'm', 1, ?, ?)",
                 (norm.content_hash, b"\0\0\0\0", AT))
    conn.execute("INSERT INTO memory_history(memory_id, event, new_content, changes, actor, created_at)"
                 " VALUES (?, 'created', ?, ?, 'user', ?)", (memory_id, norm.storage, json.dumps({"tags": tags}), AT))


def old_store(home: Path, c: dict[str, str], half_c: dict[str, str] | None = None) -> dict[str, int]:
    """A store as the code before the new rules left it: every table that keeps user, agent or
    tool text holds the canaries (the m005 row is removed so the next start runs it); rows the
    older scanner half-redacted hold the canaries of `half_c` (no other row has them). Returns
    the row count of each table written."""
    half_c = half_c or c
    home.mkdir(parents=True)
    db = open_database(home / "memories.db")
    s = lambda where: secret_text(c, where)  # noqa: E731
    with db.with_write_tx() as conn:
        _memory(conn, 1, "mem-secret", s("memory"), [f"salt={c['entropy-token']}"], {"env": s("metadata")})
        _memory(conn, 2, "mem-plain", "We always squash merge billing branches", ["git"], {})
        # what the older scanner stored: the access key ids are markers, the secrets beside them are not
        half = (f"CI creds [REDACTED:aws-key]:{half_c['pair-secret']} and key [REDACTED:aws-key] then {half_c['aws-secret']}"
                " for the billing deploy")
        _memory(conn, 3, "mem-half", half, [], {})
        conn.execute("INSERT INTO memory_hints(memory_id, hint, model, created_at) VALUES ('mem-secret', ?, 'm', ?)",
                     (s("hint"), AT))
        conn.execute("INSERT INTO entities(id, name, canonical_name, entity_type, description, created_at, updated_at)"
                     " VALUES ('ent-secret', ?, ?, 'tool', 'a key', ?, ?)", (c["aws-secret"], c["aws-secret"].lower(), AT, AT))
        conn.execute("INSERT INTO entities(id, name, canonical_name, entity_type, description, created_at, updated_at)"
                     " VALUES ('ent-helm', 'helm', 'helm', 'tool', ?, ?, ?)", (s("description"), AT, AT))
        for entity in ("ent-secret", "ent-helm"):
            conn.execute("INSERT INTO entity_attributes(id, entity_id, memory_id, kind, content, normalized_content,"
                         " created_at, updated_at) VALUES (?, ?, 'mem-secret', 'attribute', ?, ?, ?, ?)",
                         (f"attr-{entity}", entity, s("attribute"), s("attribute").lower(), AT, AT))
            conn.execute("INSERT INTO memory_entity_mentions(memory_id, entity_id, mention_text, source, created_at)"
                         " VALUES ('mem-secret', ?, ?, 'llm', ?)", (entity, c["aws-secret"], AT))
        conn.execute("INSERT INTO relations(id, source_entity_id, target_entity_id, relation_type, created_at,"
                     " updated_at) VALUES ('rel', 'ent-helm', 'ent-secret', 'uses', ?, ?)", (AT, AT))
        conn.execute("INSERT INTO memory_jobs(job_type, memory_id, payload, status, run_after, last_error, created_at,"
                     " updated_at) VALUES ('extract', 'mem-secret', ?, 'dead', ?, ?, ?, ?)",
                     (json.dumps({"content": s("job")}), AT, s("job error"), AT, AT))
        conn.execute("INSERT INTO documents(id, source_type, title, raw_content, status, created_at, updated_at)"
                     " VALUES ('doc', 'text', ?, ?, 'done', ?, ?)", (f"runbook {c['aws-secret']}", s("document"), AT, AT))
        conn.execute("INSERT INTO sessions(session_key, harness, project, status, context, metadata, started_at)"
                     " VALUES ('sess', 'claude-code', 'billing', 'ended', ?, ?, ?)",
                     (s("session context"), json.dumps({"first": s("session metadata")}), AT))
        conn.execute("INSERT INTO session_prompts(session_key, idx, prompt, injected, created_at) VALUES ('sess', 0, ?, ?, ?)",
                     (s("prompt"), s("injected"), AT))
        transcript = s("transcript") + "\n" + s("assistant")
        conn.execute("INSERT INTO session_transcripts(session_key, transcript, sha256, chars, created_at)"
                     " VALUES ('sess', ?, ?, ?, ?)",
                     (transcript, hashlib.sha256(transcript.encode()).hexdigest(), len(transcript), AT))
        conn.execute("INSERT INTO session_checkpoints(session_key, trigger, content, created_at) VALUES ('sess', 'compact', ?, ?)",
                     (s("checkpoint"), AT))
        conn.execute("INSERT INTO session_prompts(session_key, idx, prompt, created_at) VALUES ('sess', 1, ?, ?)",
                     (half, AT))
        conn.execute("INSERT INTO predictor_session_context(session_key, project, context_text, created_at)"
                     " VALUES ('sess', 'billing', ?, ?)", (s("predictor context"), AT))
        conn.execute("INSERT INTO observer_scratchpads(session_key, project, state, updated_at) VALUES ('sess', 'billing', ?, ?)",
                     (json.dumps({"checkpoints": [s("scratchpad")], "n": 1}), AT))
        conn.execute("INSERT INTO observer_signals(session_key, project, signal_class, key, files, detail, created_at)"
                     " VALUES ('sess', 'billing', 'error_fix', ?, '[\"src/deploy.py\"]', ?, ?)",
                     (s("signal key"), json.dumps({"command": s("signal detail")}), AT))
        conn.execute("DELETE FROM schema_migrations WHERE version = 5")
    counts = {}
    with db.snapshot() as conn:
        for table in ("memories", "memory_history", "memory_hints", "entities", "entity_attributes", "documents",
                      "sessions", "session_prompts", "session_transcripts", "session_checkpoints", "memory_jobs",
                      "predictor_session_context", "observer_scratchpads", "observer_signals"):
            counts[table] = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    db.checkpoint()
    db.close()
    return counts


def _needles(c: dict[str, str]) -> dict[str, str]:
    # an access key id alone is not a secret; the project token is a project, not text (m006's own test)
    return {k: v for k, v in c.items() if k not in ("aws-id", "project-token")}


def _folded_hits(home: Path, needles: dict[str, str]) -> dict[str, list[str]]:
    """FTS5 keeps terms case-folded and split at `/` and `+`: look for each canary's letters that way."""
    folded = {k: v.split("/")[0].split("+")[0].lower() for k, v in needles.items()}
    hits: dict[str, list[str]] = {}
    for path in home.glob("memories.db*"):
        data = path.read_bytes().lower()
        for name, needle in folded.items():
            if needle.encode() in data:
                hits.setdefault(name, []).append(path.name)
    return hits


def test_an_old_store_keeps_no_secret_once_the_new_daemon_opens_it(tmp_path):
    c, half_c = canaries(), canaries()
    needles = {**_needles(c), "half-pair-secret": half_c["pair-secret"], "half-aws-secret": half_c["aws-secret"]}
    home = tmp_path / "kenning"
    before = old_store(home, c, half_c)
    db = home / "memories.db"
    assert set(table_hits(db, needles)) == set(needles)  # the old store holds every canary
    assert set(_folded_hits(home, needles)) == set(needles)

    daemon = start_daemon(home)
    try:
        with httpx.Client(base_url=daemon.base_url, timeout=60) as http:
            memory = http.get("/api/memory/mem-secret").json()
            found = http.post("/api/memory/recall", json={"query": "squash merge billing", "limit": 5}).json()
        assert table_hits(db, needles) == {}
        assert file_hits(home, needles) == {}
    finally:
        daemon.stop()
    assert file_hits(home, needles) == {}  # after the daemon's checkpoint and close too
    assert _folded_hits(home, needles) == {}

    text = json.dumps(memory)
    assert "[REDACTED:aws-secret-key]" in text and "we decided to deploy billing" in text
    redacted = [h for h in memory["history"] if h["event"] == "redacted"]
    assert len(redacted) == 1 and redacted[0]["old_content"] is None, memory["history"]
    assert "aws-secret-key" in json.dumps(redacted[0]["changes"])
    assert "mem-plain" in json.dumps(found)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    after = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in before}
    # nothing deleted but the entity named after a secret (and its attribute); one history row per changed memory
    assert after == {**before, "entities": before["entities"] - 1, "entity_attributes": before["entity_attributes"] - 1,
                     "memory_history": before["memory_history"] + 2}
    assert conn.execute("SELECT name FROM entities").fetchall() == [("helm",)]
    assert conn.execute("SELECT count(*) FROM relations").fetchone()[0] == 0
    transcript, sha, chars = conn.execute("SELECT transcript, sha256, chars FROM session_transcripts").fetchone()
    assert sha == hashlib.sha256(transcript.encode()).hexdigest() and chars == len(transcript)
    assert "[REDACTED" in transcript and "transcript: we decided" in transcript
    state = json.loads(conn.execute("SELECT state FROM observer_scratchpads").fetchone()[0])
    assert state["n"] == 1 and "[REDACTED" in state["checkpoints"][0]  # JSON stays JSON
    fts = conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'deploy'").fetchall()
    assert sorted(fts) == [(1,), (3,)]  # the index follows the redacted content
    old_hash = normalize_content(secret_text(c, "memory")).content_hash
    assert conn.execute("SELECT count(*) FROM embeddings WHERE content_hash = ?", (old_hash,)).fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM schema_migrations WHERE version = 5").fetchone()[0] == 1


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_m005_redacts_old_rows_on_either_backend(db):
    c = canaries()
    s = lambda where: secret_text(c, where)  # noqa: E731
    with db.with_write_tx() as conn:
        _memory(conn, 7, "mem-old", s("memory"), ["ops"], {"env": s("metadata"), "lookup_keys": ["deploy"]})
        conn.execute("INSERT INTO sessions(session_key, status, context, metadata, started_at)"
                     " VALUES ('old', 'ended', ?, ?, ?)", (s("context"), json.dumps({"first": s("meta")}), AT))
        conn.execute("INSERT INTO session_prompts(session_key, idx, prompt, created_at) VALUES ('old', 0, ?, ?)",
                     (s("prompt"), AT))
        conn.execute("INSERT INTO entities(id, name, canonical_name, entity_type, created_at, updated_at)"
                     " VALUES ('e1', ?, ?, 'tool', ?, ?)", (c["pair-secret"], c["pair-secret"].lower(), AT, AT))
        conn.execute("INSERT INTO entities(id, name, canonical_name, entity_type, created_at, updated_at)"
                     " VALUES ('e2', '[REDACTED:aws-key]', '[redacted:aws-key]', 'tool', ?, ?)", (AT, AT))
        conn.execute("INSERT INTO entities(id, name, canonical_name, entity_type, created_at, updated_at)"
                     " VALUES ('e3', 'helm', 'helm', 'tool', ?, ?)", (AT, AT))
        conn.execute("DELETE FROM schema_migrations WHERE version = 5")
    assert 5 in migrate(db)
    assert migrate(db) == []  # once
    with db.snapshot() as conn:
        content, metadata = conn.execute("SELECT content, metadata FROM memories WHERE id = 'mem-old'").fetchone()
        assert "[REDACTED:aws-secret-key]" in content and json.loads(metadata)["lookup_keys"] == ["deploy"]
        rows = conn.execute("SELECT event, old_content, actor FROM memory_history WHERE memory_id = 'mem-old'"
                            " ORDER BY id").fetchall()
        assert [tuple(r) for r in rows][-1] == ("redacted", None, "migration")
        texts = json.dumps([list(r) for r in conn.execute("SELECT context, metadata FROM sessions").fetchall()]
                           + [list(r) for r in conn.execute("SELECT prompt FROM session_prompts").fetchall()]
                           + [list(r) for r in conn.execute("SELECT content, tags, metadata FROM memories").fetchall()])
        assert not [k for k, v in _needles(c).items() if v in texts], texts
        assert [tuple(r) for r in conn.execute("SELECT id FROM entities").fetchall()] == [("e3",)]
        assert json.loads(conn.execute("SELECT metadata FROM sessions").fetchone()[0])["first"].startswith("meta:")


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_m006_redacts_issue_33s_shapes_in_old_rows_on_either_backend(db):
    """A row stored before issue 33: a JWT's signature left after the older scanner's marker, a
    redis URL password with an empty user, curl -u / --password / mysql -p passwords, and a token as
    the memory's project. m006 takes them all out; the row's history says so."""
    c = canaries()
    old = (f"cookie [REDACTED:jwt]{c['jwt-signature']} and redis://:{c['redis-password']}@cache:6379; "
           f"curl -u admin:{c['curl-password']} x; sync --password {c['flag-password']}; "
           f"mysql -u root -p{c['mysql-password']} billing")
    with db.with_write_tx() as conn:
        _memory(conn, 9, "mem-33", old, ["ops"], {})
        conn.execute("UPDATE memories SET project = ? WHERE id = 'mem-33'", (c["project-token"],))
        conn.execute("INSERT INTO sessions(session_key, project, status, context, started_at)"
                     " VALUES ('old-33', ?, 'ended', ?, ?)", (c["project-token"], old, AT))
        conn.execute("DELETE FROM schema_migrations WHERE version = 6")
    assert 6 in migrate(db)
    assert migrate(db) == []  # once
    needles = {k: c[k] for k in ("jwt-signature", "redis-password", "curl-password", "flag-password",
                                 "mysql-password", "project-token")}
    with db.snapshot() as conn:
        rows = [list(r) for r in conn.execute("SELECT content, project FROM memories WHERE id = 'mem-33'").fetchall()]
        rows += [list(r) for r in conn.execute("SELECT project, context FROM sessions WHERE session_key = 'old-33'")]
        text = json.dumps(rows)
        assert {k for k, v in needles.items() if v in text} == set(), text
        assert "[REDACTED:url-password]" in text and "[REDACTED:password]" in text and "[REDACTED:github-token]" in text
        reasons = [r[0] for r in conn.execute("SELECT reason FROM memory_history WHERE memory_id = 'mem-33'"
                                              " AND event = 'redacted'").fetchall()]
        assert reasons == ["m006: secrets redacted by the scanner's rules of issue 33"]
