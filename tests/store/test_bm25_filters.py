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

            ranked = bm25(conn, "memories_fts", ["kafka"], None, window=None)  # exact: no postings window
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


def test_a_filter_passing_a_third_of_the_hits_is_answered_across_lookup_chunks(db):
    """_filtered looks the hits up best first, 2×limit first, and stops once `limit` passed (issue 36):
    with a third passing, the first chunk is short and the next ones must keep the order exact."""
    with db.with_write_tx() as conn:
        for i in range(600):
            store.insert_memory(conn, MemoryDraft(content=f"broker {i} lag" + " kafka" * (1 + i % 7) + f" note {i % 11}",
                                                  project="a" if i % 3 == 0 else "b"))
    conn = db.reader()
    for project, limit in (("a", 5), ("a", 10), ("a", 40), ("b", 10), ("a", 150)):
        got = bm25_search(conn, "kafka", MemoryFilter(project=project), limit=limit)
        everything = bm25_search(conn, "kafka", None, limit=600)
        ids = {r[0] for r in conn.execute("SELECT id FROM memories WHERE project = ?", (project,)).fetchall()}
        expected = [s for m, s in everything if m in ids][:limit]
        assert [round(s, 9) for _, s in got] == [round(s, 9) for s in expected], (project, limit)
        assert {m for m, _ in got} <= ids and len(got) == min(limit, len(ids))


def test_a_large_store_ranked_in_two_halves_at_once_gives_the_one_statement_ranking(db):
    """Issue 36: given a reader, a store over `split_from` memories is ranked below and above its middle
    rowid on two threads; the merged ranking has the single statement's scores, filtered or not."""
    import threading

    with db.with_write_tx() as conn:
        for i in range(900):
            store.insert_memory(conn, MemoryDraft(
                content=f"broker {i} lag" + " kafka" * (1 + i % 5) + (" consumer" if i % 3 else "") + f" zone {i % 13}",
                project="a" if i % 4 == 0 else "b"))
    conn = db.reader()
    threads: list[threading.Thread] = []

    def reader():
        threads.append(threading.current_thread())
        return db.reader()

    for query in ("kafka consumer lag", "zone 7 broker", "kafka"):
        for filters in (None, MemoryFilter(project="a")):
            for limit in (10, 100):
                one = bm25_search(conn, query, filters, limit)
                halves = bm25_search(conn, query, filters, limit, reader=reader, split_from=100)
                assert [round(s, 9) for _, s in halves] == [round(s, 9) for _, s in one], (query, filters, limit)
                assert len(halves) == len(one) > 0
    if db.backend == "sqlite":
        assert threads and all(t is not threading.current_thread() for t in threads)
        threads.clear()
        bm25_search(conn, "kafka", None, 10, reader=reader)  # 900 memories: under the default size, one statement
        assert not threads
