"""PostgreSQL BM25 reads per-lexeme tables (`memories_fts_terms`, `memories_fts_df`, migration
m007) kept by a trigger: after inserts, edits and deletes, and after m007 fills them for a store
that already holds memories, its scores equal FTS5's formula computed from the memories' text."""

from __future__ import annotations

import math

import pytest

from kenning.core.types import MemoryDraft
from kenning.store import memories as store
from kenning.store.migrations import applied_versions, for_backend, migrate
from kenning.store.pg.db import PostgresDatabase
from kenning.store.pg.search import bm25

QUERIES = (["kafka"], ["deploy", "zeppelin"], ["lag", "offsets", "window"], ["nothing_matches_this"])


def reference_bm25(conn, tokens: list[str]) -> dict[int, float]:
    """FTS5's BM25 (k1 1.2, b 0.75, idf floored at 1e-6) recomputed from every memory's text."""
    rows = conn.execute(
        "SELECT m.rid, u.lexeme, COALESCE(array_length(u.positions, 1), 1) FROM memories m"
        " CROSS JOIN LATERAL unnest(kenning_tsv(m.content || ' ' || m.tags)) u").fetchall()
    query = {r[0] for r in conn.execute("SELECT lexeme FROM unnest(kenning_tsv(?))", (" ".join(tokens),))}
    tf: dict[int, dict[str, int]] = {}
    for rid, lexeme, count in rows:
        tf.setdefault(rid, {})[lexeme] = count
    docs = conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
    avgdl = max(sum(sum(t.values()) for t in tf.values()) / max(docs, 1), 1)
    df = {lex: sum(1 for t in tf.values() if lex in t) for lex in query}
    scores = {}
    for rid, terms in tf.items():
        length = sum(terms.values())
        matched = [lex for lex in query if lex in terms]
        if matched:
            scores[rid] = sum(max(math.log((docs - df[lex] + 0.5) / (df[lex] + 0.5)), 1e-6) * terms[lex] * 2.2
                              / (terms[lex] + 1.2 * (0.25 + 0.75 * length / avgdl)) for lex in matched)
    return scores


def assert_bm25_matches_the_text(conn) -> None:
    for tokens in QUERIES:
        got = bm25(conn, "memories_fts", tokens, None)
        want = reference_bm25(conn, tokens)
        assert {rid for rid, _ in got} == set(want), tokens
        for rid, score in got:
            assert score == pytest.approx(want[rid], rel=1e-9), (tokens, rid)
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)


def fill(conn, n: int, start: int = 0) -> list[str]:
    words = ["kafka", "deploy", "lag", "offsets", "window", "zeppelin", "service"]
    return [store.insert_memory(conn, MemoryDraft(
        content=" ".join(words[(i + j) % len(words)] for j in range(1 + i % 5)) + f" note {i}" + " kafka" * (i % 3),
        tags=["deploy"] if i % 4 == 0 else []))[0] for i in range(start, start + n)]


@pytest.mark.parametrize("backend", ["postgres"])
def test_bm25_tables_follow_inserts_edits_and_deletes(db):
    with db.with_write_tx() as conn:
        ids = fill(conn, 60)
    assert_bm25_matches_the_text(db.reader())
    with db.with_write_tx() as conn:
        for memory_id in ids[:10]:  # an edit re-indexes the row: its old lexemes leave
            conn.execute("UPDATE memories SET content = ? WHERE id = ?", ("zeppelin window window", memory_id))
        for memory_id in ids[10:25]:
            store.purge_memory(conn, memory_id)
    assert_bm25_matches_the_text(db.reader())
    df = dict(db.reader().execute("SELECT lexeme, df FROM memories_fts_df").fetchall())
    assert df["zeppelin"] >= 10 and all(n >= 0 for n in df.values())


def test_postgres_m007_fills_the_bm25_tables_of_a_store_that_holds_memories(pg_server, tmp_path):
    """A store migrated before m007 existed: its memories get terms and counts, and the trigger
    keeps them from then on."""
    url = pg_server.create_database("pre_m007")
    db = PostgresDatabase(url)
    try:
        for migration in for_backend("postgres"):
            if migration.version == 7:
                continue
            with db.with_write_tx() as conn:
                applied_versions(conn)
                migration.up(conn)
                conn.execute("INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, 'x')",
                             (migration.version, migration.name))
        with db.with_write_tx() as conn:
            fill(conn, 40)
        assert db.reader().execute("SELECT to_regclass('memories_fts_terms')").fetchone()[0] is None
        assert migrate(db) == [7]
        assert_bm25_matches_the_text(db.reader())
        with db.with_write_tx() as conn:
            fill(conn, 20, start=40)
        assert_bm25_matches_the_text(db.reader())
    finally:
        db.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_hint_matches_rank_the_rare_hint_first(db):
    from kenning.store.hints import add_hints, search_hints
    from kenning.store.search import fts_query

    with db.with_write_tx() as conn:
        ids = fill(conn, 12)
        add_hints(conn, ids[0], ["how do we rotate the zeppelin credentials"])
        for memory_id in ids[1:6]:
            add_hints(conn, memory_id, ["how do we deploy the service"])
    ranked = [m for m, _ in search_hints(db.reader(), fts_query("rotate deploy credentials"), limit=10)]
    assert ranked[0] == ids[0] and set(ranked) == set(ids[:6])


@pytest.mark.parametrize("backend", ["postgres"])
def test_bm25_pruning_keeps_the_top_results_of_exact_scoring(db):
    """With a postings window smaller than the common lexemes' document counts (as at a million
    memories), a query naming a rare word ranks its top results exactly as exact scoring does:
    documents holding a rare lexeme are scored in full; no score is ever over-estimated; and the
    window does bound the work (fewer documents ranked for common words alone)."""
    with db.with_write_tx() as conn:
        fill(conn, 150)
        rare = [store.insert_memory(conn, MemoryDraft(content=f"zookeeper quorum {'lag ' * (i % 3)}note z{i}"
                                                      + " kafka" * (i % 2)))[0] for i in range(8)]
    conn = db.reader()
    rid_of = dict(conn.execute("SELECT rid, id FROM memories").fetchall())
    for tokens in (["zookeeper", "kafka", "deploy"], ["quorum", "lag", "offsets", "window"]):
        exact = bm25(conn, "memories_fts", tokens, None, window=None)
        pruned = bm25(conn, "memories_fts", tokens, None, window=20)
        assert pruned[:8] == exact[:8], tokens
        assert {rid_of[rid] for rid, _ in exact[:8]} == set(rare)
        full = dict(exact)
        assert all(score <= full[rid] + 1e-9 for rid, score in pruned)
    common = ["kafka", "deploy", "lag"]
    exact, pruned = bm25(conn, "memories_fts", common, None, window=None), bm25(conn, "memories_fts", common, None, window=20)
    assert len(pruned) <= 3 * 20 < len(exact)
    assert bm25(conn, "memories_fts", common, None) == exact  # the default window: exact on a small store
