"""Lifecycle (v4 section 18): decay, pruning that respects pinned and user-verified, hard delete
after the tombstone window, access-count trust, and A/B group assignment."""

from __future__ import annotations

from datetime import timedelta

from kenning.core.clock import to_iso, utcnow
from kenning.core.config_observer import LifecycleSettings
from kenning.core.events import ToolResult
from kenning.core.types import MemoryDraft
from kenning.observer.lifecycle import current_confidence
from kenning.observer.service import ab_group
from kenning.pipeline.retention import sweep


def _age(k, memory_id: str, days: float, field: str = "last_accessed_at") -> None:
    with k.db.with_write_tx() as conn:
        conn.execute(f"UPDATE memories SET {field} = ?, created_at = ? WHERE id = ?",
                     (to_iso(utcnow() - timedelta(days=days)), to_iso(utcnow() - timedelta(days=days)), memory_id))


def test_decay_follows_the_type_half_life():
    cfg = LifecycleSettings()
    used = to_iso(utcnow() - timedelta(days=7))
    assert abs(current_confidence(0.8, "work_state", None, used, cfg) - 0.4) < 0.01
    assert abs(current_confidence(0.8, "gotcha", None, used, cfg) - 0.8 * 0.5 ** (7 / 60)) < 0.01
    assert current_confidence(0.8, "decision", None, used, cfg) == 0.8
    assert current_confidence(0.8, "work_state", None, used, cfg, pinned=True) == 0.8
    assert abs(current_confidence(0.8, "fact", 7.0, used, cfg) - 0.4) < 0.01  # the memory's own half-life


def test_pruning_soft_deletes_unused_memories_but_keeps_pinned_and_verified(kenning):
    k = kenning
    ids = {}
    for name, extra in {"stale": {}, "pinned": {"pinned": True}, "verified": {}, "fresh": {}, "decision": {}}.items():
        draft = MemoryDraft(content=f"work state note {name}: halfway through the refactor",
                            type="decision" if name == "decision" else "work_state", project="life", **extra)
        ids[name] = k.remember(draft).id
    k.edit(ids["verified"], {"user_verified": True}, actor="cli")
    for name in ("stale", "pinned", "verified", "decision"):
        _age(k, ids[name], 30)  # > 3 × 7-day half-life
    result = k.observer.run_lifecycle()
    assert result["soft_deleted"] == 1
    assert k.get(ids["stale"]).is_deleted
    assert not any(k.get(ids[n]).is_deleted for n in ("pinned", "verified", "fresh", "decision"))
    life = k.observer.lifecycle_of(k.get(ids["fresh"]))
    assert life["trust"] == "new" and life["half_life_days"] == 7.0 and life["prunes_after"]
    assert k.observer.lifecycle_of(k.get(ids["verified"]))["trust"] == "verified"

    # 30 days after the soft delete the retention sweep hard-deletes it, but not a verified tombstone
    k.forget(ids["verified"], actor="cli")
    for name in ("stale", "verified"):
        _age(k, ids[name], 31, "deleted_at")
    sweep(k.db, k.settings.pipeline.retention)
    remaining = {m.id for m in k.list(None, limit=100)[0]} | {
        r[0] for r in k.db.reader().execute("SELECT id FROM memories WHERE is_deleted = 1")}
    assert ids["stale"] not in remaining and ids["verified"] in remaining


def test_access_count_raises_confidence_and_clears_review(kenning):
    k = kenning
    memory = k.remember(MemoryDraft(content="gotcha: the payments sandbox rejects amounts under 50 cents",
                                    type="gotcha", project="life", confidence=0.7))
    with k.db.with_write_tx() as conn:
        conn.execute("UPDATE memories SET access_count = 10, needs_review = 1 WHERE id = ?", (memory.id,))
    first = k.observer.run_lifecycle()
    assert first["confidence_raised"] >= 1 and first["review_cleared"] >= 1
    after = k.get(memory.id)
    assert abs(after.confidence - 0.75) < 1e-6 and not after.needs_review
    k.observer.run_lifecycle()  # same access count: no second raise
    assert abs(k.get(memory.id).confidence - 0.75) < 1e-6
    assert k.observer.lifecycle_of(after)["trust"] == "established"


def test_ab_groups_are_stable_and_follow_the_configured_shares():
    groups = [ab_group(f"s{i}", "proj", 5, 10) for i in range(4000)]
    assert groups == [ab_group(f"s{i}", "proj", 5, 10) for i in range(4000)]
    share = {g: groups.count(g) / len(groups) for g in ("control", "passive", "full")}
    assert 0.03 < share["control"] < 0.07 and 0.07 < share["passive"] < 0.13 and share["full"] > 0.8
    assert set(ab_group(f"s{i}", "p", 0, 0) for i in range(100)) == {"full"}


def test_control_group_sessions_get_no_step_injection(kenning):
    k = kenning
    k.remember(MemoryDraft(content="gotcha: src/ab/flags.py caches flags for 60 s", type="gotcha", project="abp",
                           related_files=["src/ab/flags.py"], confidence=0.9))
    k.settings.observer.ab.enabled = True
    k.settings.observer.ab.control_percent = 100
    answer = k.observer.post_tool_use(ToolResult(session_key="ab-c", tool_name="Read", project="abp",
                                                 tool_input={"file_path": "src/ab/flags.py"}))
    assert answer["memory_ids"] == []
    k.settings.observer.ab.enabled = False
    answer = k.observer.post_tool_use(ToolResult(session_key="ab-f", tool_name="Read", project="abp",
                                                 tool_input={"file_path": "src/ab/flags.py"}))
    assert len(answer["memory_ids"]) == 1
    result = k.observer.end_session("ab-f", wait=True)
    assert result["ab_group"] == "full" and result["step_injections"] == 1
    assert any(row["ab_group"] == "full" for row in k.observer.status()["ab_metrics"])
