"""BM25 ranks in FTS5 first and filters after: the result must equal the filtered join's."""

from __future__ import annotations

from kenning.core.types import MemoryDraft, MemoryFilter
from kenning.store import memories as store
from kenning.store.search import bm25_search


def test_filtered_bm25_equals_a_full_filtered_ranking(db):
    with db.with_write_tx() as conn:
        for i in range(2500):
            project = "rare" if i % 500 == 7 else "common"
            extra = " kafka" * (1 + i % 4)
            store.insert_memory(conn, MemoryDraft(content=f"consumer {i} lag{extra} offsets", project=project))
    conn = db.reader()

    def reference(project, limit):
        if db.backend == "postgres":  # the full ranking, every match, filtered afterwards
            from kenning.store.pg.search import bm25

            ranked = bm25(conn, "memories_fts", ["kafka"], None)
            rows = conn.execute("SELECT rid, id FROM memories WHERE project = ?", (project,)).fetchall()
            ids = dict(rows)
            return [(ids[rid], round(score, 9)) for rid, score in ranked if rid in ids][:limit]
        rows = conn.execute(
            "SELECT m.id, -bm25(memories_fts) FROM memories_fts JOIN memories m ON m.rid = memories_fts.rowid"
            " WHERE memories_fts MATCH '\"kafka\"' AND m.project = ? ORDER BY bm25(memories_fts), m.rid LIMIT ?",
            (project, limit),
        ).fetchall()
        return [(r[0], round(r[1], 9)) for r in rows]

    for project, limit in (("rare", 10), ("common", 10), ("common", 300)):
        got = bm25_search(conn, "kafka", MemoryFilter(project=project), limit=limit)
        assert [(m, round(s, 9)) for m, s in got] == reference(project, limit) or (
            # equal scores may come in either order; the score sequence must match exactly
            [round(s, 9) for _, s in got] == [s for _, s in reference(project, limit)]
        )
    rare = bm25_search(conn, "kafka", MemoryFilter(project="rare"), limit=10)
    assert len(rare) == 5 and all(store.get_memory(conn, m).project == "rare" for m, _ in rare)
