"""The full-text index check and its repair on both backends: memories written while the index
trigger was gone show as missing, and `rebuild_fts` (doctor --fix, POST /api/diagnostics/repair,
maintenance's consistency check) brings every memory back into search."""

from __future__ import annotations

from kenning.core.types import MemoryDraft
from kenning.store import memories as store
from kenning.store.diagnostics import index_stats, rebuild_fts
from kenning.store.search import bm25_search


def add(db, texts: list[str]) -> list[str]:
    with db.with_write_tx() as conn:
        return [store.insert_memory(conn, MemoryDraft(content=text))[0] for text in texts]


def test_rebuild_brings_unindexed_memories_back_into_search(db, backend):
    add(db, [f"kafka consumer lag note {i}" for i in range(20)])
    stats = index_stats(db.reader(), None)
    assert (stats["fts_rows"], stats["fts_missing"], stats["fts_orphans"]) == (20, 0, 0)

    with db.with_write_tx() as conn:  # the index trigger goes missing (a damaged or hand-edited store)
        conn.execute("DROP TRIGGER memories_fts_ai" + (" ON memories" if backend == "postgres" else ""))
    late = add(db, [f"zeppelin rollout checklist {i}" for i in range(5)])
    stats = index_stats(db.reader(), None)
    assert (stats["fts_rows"], stats["fts_missing"]) == (20, 5)
    assert bm25_search(db.reader(), "zeppelin", None, 10) == []

    with db.with_write_tx() as conn:
        rebuild_fts(conn)
    stats = index_stats(db.reader(), None)
    assert (stats["fts_rows"], stats["fts_missing"], stats["fts_orphans"]) == (25, 0, 0)
    found = bm25_search(db.reader(), "zeppelin", None, 10)
    assert {m for m, _ in found} == set(late) and all(score > 0 for _, score in found)
    kafka = bm25_search(db.reader(), "kafka lag", None, 30)
    assert len(kafka) == 20  # the memories indexed before are still there once, not twice
