"""Migration 012 (issue 22): a store written by the old extraction rules — session-summary sentences
typed constraint / decision for a trigger word, chatter included — is opened by a real daemon; what
fails the claim test moves into review (needs_review, evidence, a history row), a real rule stays
as it was, pinned memories are left alone, and nothing is deleted."""

from __future__ import annotations

from kenning.core.types import MemoryDraft
from kenning.store import memories as mem_store
from kenning.store.claim_review import rescore_learned
from kenning.store.db import open_database
from bench.harnesses.daemon import start_daemon

OLD_RULES = [  # what the old key-fact rules stored (the examples), with the type they gave
    ("So it's not that `remap` itself is broken for non-string keys, but rather that we never coerce them?", "constraint"),
    ("Exactly, `NaN` is the issue.", "constraint"),
    ("My guess is either the specific code paths weren't hit, or we always skipped them.", "constraint"),
    ("Yeah, that's exactly what 25e6d6b addressed.", "constraint"),
    ("Operator overloading order is always a tricky bit.", "constraint"),
    ("Since the 3.2 upgrade the export is failing - customers see empty invoices and it must be fixed", "constraint"),
]
RULE = ("We decided that every CSV row must end with CRLF because the ERP parser rejects bare LF.", "decision")


def test_old_chatter_moves_into_review_and_rules_stay(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    db = open_database(home / "memories.db")
    ids = {}
    with db.with_write_tx() as conn:
        for content, kind in [*OLD_RULES, RULE]:
            ids[content], _ = mem_store.insert_memory(conn, MemoryDraft(
                content=content, type=kind, confidence=0.6, importance=0.8, project="old", source="session-summary",
                session_key="old-session"))
        pinned, _ = mem_store.insert_memory(conn, MemoryDraft(
            content="Exactly, and it always bites us.", type="constraint", project="old", source="session-summary",
            pinned=True))
        mine, _ = mem_store.insert_memory(conn, MemoryDraft(
            content="Maybe we should always use tabs.", type="preference", project="old", source="user"))
        conn.execute("DELETE FROM schema_migrations WHERE version = 12")  # as if written before it existed
    db.checkpoint()
    db.close()

    daemon = start_daemon(home)
    try:
        for content, _ in OLD_RULES:
            memory = daemon.get(f"/api/memory/{ids[content]}").json()
            assert memory["needs_review"] is True and memory["is_deleted"] is False, content
            assert memory["content"] == content and memory["type"] == "constraint"  # not rewritten, not retyped
            claim = memory["metadata"]["claim"]
            assert claim["rescored"] is True and claim["rule"].startswith("rescored:")
            assert any(h["event"] == "needs_review" and "claim test" in (h.get("reason") or "")
                       for h in memory["history"])
        rule = daemon.get(f"/api/memory/{ids[RULE[0]]}").json()
        assert rule["needs_review"] is False and rule["metadata"]["claim"]["rule"] == "stated-decision"
        assert daemon.get(f"/api/memory/{pinned}").json()["needs_review"] is False  # pinned: left alone
        assert "claim" not in daemon.get(f"/api/memory/{mine}").json()["metadata"]  # not learned: left alone
        listed = daemon.get("/api/memory", project="old", limit=100).json()
        assert listed["total"] == len(OLD_RULES) + 3  # nothing deleted
    finally:
        daemon.stop()

    db = open_database(home / "memories.db")  # re-running changes nothing: each memory was judged once
    try:
        with db.with_write_tx() as conn:
            assert rescore_learned(conn, "2026-01-01T00:00:00.000Z")["judged"] == 0
    finally:
        db.close()
