"""Access count as trust on both backends: every `min_access` uncorrected accesses raise a memory's
confidence by one step, once per threshold crossed (metadata.trust_level), up to the cap; a memory
the user corrected is left alone. On PostgreSQL the old single UPDATE failed on every run
(json_set missing, json_extract's text against COALESCE(…, 0))."""

from __future__ import annotations

from kenning.core.clock import now_iso
from kenning.core.types import MemoryDraft
from kenning.store import memories as store
from kenning.store.observer import trust_promote


def _memory(db, content: str, accesses: int) -> str:
    with db.with_write_tx() as conn:
        memory_id, _ = store.insert_memory(conn, MemoryDraft(content=content, confidence=0.5))
        for _ in range(accesses):
            store.record_access(conn, [memory_id])
    return memory_id


def _promote(db) -> dict[str, int]:
    with db.with_write_tx() as conn:
        return dict(trust_promote(conn, min_access=5, step=0.1, cap=0.7, clear_review_at=100, at=now_iso()))


def test_accesses_raise_confidence_once_per_threshold_up_to_the_cap(db) -> None:
    often = _memory(db, "The ledger tests need the fixture clock frozen at midnight UTC.", 11)
    rarely = _memory(db, "Release notes are written in the past tense.", 3)
    assert _promote(db)["confidence_raised"] == 1
    assert _promote(db)["confidence_raised"] == 0  # the threshold crossed is remembered
    promoted, untouched = store.get_memory(db.reader(), often), store.get_memory(db.reader(), rarely)
    assert round(promoted.confidence, 3) == 0.6
    assert promoted.metadata["trust_level"] == 2
    assert untouched.confidence == 0.5 and "trust_level" not in untouched.metadata
    with db.with_write_tx() as conn:
        for _ in range(20):
            store.record_access(conn, [often])
    _promote(db)
    assert round(store.get_memory(db.reader(), often).confidence, 3) == 0.7  # the cap
    assert store.get_memory(db.reader(), often).metadata["trust_level"] == 6
