"""Migration 014 (issue 31) on a store written by the code before it: rules without a scope, commit subjects
typed constraint by auto-protection, fragments at session start. A real store (both backends), the real
migrations; nothing is deleted and every change has its memory_history row."""

from __future__ import annotations

from kenning.core.types import MemoryDraft
from kenning.store import memories as mem_store
from kenning.store.migrations import migrate

RULES = {  # what the session-end overlay stored from the dev split's chats (type constraint, no scope)
    "project": "Never push to main; every change goes through a pull request.",
    "area": "`merge_tags` de-duplicates case-insensitively, keeping the casing of the first occurrence.",
    "fragment": "Case-INSENSITIVE, always.",
}
COMMIT = "switch to monotonic time (commit 77821b9418)"  # typed constraint by decision auto-protection


def test_old_rules_get_scope_commits_become_commits_and_fragments_go_to_review(db):
    ids = {}
    with db.with_write_tx() as conn:
        for name, content in RULES.items():
            ids[name], _ = mem_store.insert_memory(conn, MemoryDraft(
                content=content, type="constraint", confidence=0.9, project="old", source="session-summary",
                session_key="old-session"))
        ids["commit"], _ = mem_store.insert_memory(conn, MemoryDraft(
            content=COMMIT, type="constraint", project="old", source="git", metadata={"sha": "77821b9418"}))
        ids["pinned"], _ = mem_store.insert_memory(conn, MemoryDraft(
            content="Only those three symbols.", type="constraint", project="old", source="session-summary", pinned=True))
        conn.execute("DELETE FROM schema_migrations WHERE version = 14")  # as if written before it existed
    migrate(db)
    conn = db.reader()
    got = {name: mem_store.get_memory(conn, memory_id) for name, memory_id in ids.items()}
    assert got["project"].applies == "project" and not got["project"].needs_review
    assert (got["area"].applies, got["area"].area) == ("area", "merge_tags")
    assert got["fragment"].needs_review and got["fragment"].applies is None and got["fragment"].metadata["fragment"]
    assert got["commit"].type == "commit" and got["commit"].content == COMMIT
    assert not got["pinned"].needs_review  # the user's word keeps its standing
    assert all(not m.is_deleted for m in got.values())
    for name in ("project", "area", "fragment", "commit"):
        rows = conn.execute("SELECT actor FROM memory_history WHERE memory_id = ? AND actor = 'migration m014'",
                            (ids[name],)).fetchall()
        assert rows, name
