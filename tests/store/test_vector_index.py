"""Vector KNN on both backends (SQLite: the in-memory index, exact; PostgreSQL: pgvector HNSW):
right answers, fresh across handles, deletions leave it, selective filters still find their nearest."""

from __future__ import annotations

import numpy as np
import pytest
import sqlean
import sqlite_vec

from kenning.core.text import normalize_content
from kenning.core.types import MemoryDraft, MemoryFilter
from kenning.store import memories as store
from kenning.core.config_store import StoreSettings
from kenning.store.factory import open_store
from kenning.store.db import open_database
from kenning.store.search import vector_search
from kenning.store.vector_index import VectorIndex
from kenning.store.vectors import delete_embedding, knn, upsert_embedding

MODEL = "test-model"


def put(db, content, vector, project=None):
    with db.with_write_tx() as conn:
        memory_id, _ = store.insert_memory(conn, MemoryDraft(content=content, project=project))
        upsert_embedding(conn, normalize_content(content).content_hash, MODEL, vector)
    return memory_id


def assert_exact_top_k(hits, vectors, hashes, query, k):
    """The hits are the k most similar vectors, best first (half precision: within 1e-3)."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    exact = dict(zip(hashes, unit @ (query / np.linalg.norm(query))))
    assert len(hits) == k
    for hit_hash, similarity in hits:
        assert similarity == pytest.approx(exact[hit_hash], abs=1e-3)
    found = [exact[h] for h, _ in hits]
    assert all(a >= b - 1e-3 for a, b in zip(found, found[1:]))
    assert min(found) >= sorted(exact.values(), reverse=True)[k - 1] - 1e-3


def test_knn_is_exact_and_sees_writes_from_another_handle(store_config, tmp_path):
    path = tmp_path / "v.db"
    reader_side, writer_side = (open_store(StoreSettings(**store_config), path) for _ in range(2))
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    hashes = [normalize_content(f"note {i}").content_hash for i in range(300)]
    for i in range(200):
        put(writer_side, f"note {i}", vectors[i])
    query = rng.normal(size=16).astype(np.float32)
    conn = reader_side.reader()
    assert_exact_top_k(knn(conn, query, MODEL, 10), vectors[:200], hashes[:200], query, 10)

    for i in range(200, 300):  # committed by the other handle after the index was loaded
        put(writer_side, f"note {i}", vectors[i])
    assert_exact_top_k(knn(conn, query, MODEL, 10), vectors, hashes, query, 10)
    assert knn(conn, vectors[250], MODEL, 1)[0][0] == hashes[250]  # a row added after loading
    assert knn(conn, query, "other-model", 10) == []
    reader_side.close()
    writer_side.close()


def test_deleted_vectors_leave_the_index(db):
    rng = np.random.default_rng(2)
    vectors = rng.normal(size=(50, 8)).astype(np.float32)
    for i in range(50):
        put(db, f"fact {i}", vectors[i])
    gone = normalize_content("fact 7").content_hash
    assert knn(db.reader(), vectors[7], MODEL, 1)[0][0] == gone
    with db.with_write_tx() as conn:
        assert delete_embedding(conn, gone, MODEL) == 1
        if db.backend == "sqlite":
            assert conn.execute("SELECT deletions FROM vector_epoch").fetchone()[0] == 1
    hits = knn(db.reader(), vectors[7], MODEL, 50)
    assert gone not in {h for h, _ in hits} and len(hits) == 49


def test_selective_filters_still_find_their_nearest(db):
    """One project holds 3 of 2,000 vectors: over-fetch and deepening miss them, the scan does not."""
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(2000, 8)).astype(np.float32)
    rare = {}
    for i in range(2000):
        project = "rare" if i in (11, 900, 1999) else "common"
        memory_id = put(db, f"item {i}", vectors[i], project=project)
        if project == "rare":
            rare[i] = memory_id
    query = vectors[900] + 0.01
    hits = vector_search(db.reader(), query, MODEL, MemoryFilter(project="rare"), limit=5)
    assert [m for m, _ in hits][0] == rare[900]
    assert {m for m, _ in hits} == set(rare.values())
    common = vector_search(db.reader(), query, MODEL, MemoryFilter(project="common"), limit=5)
    assert len(common) == 5 and rare[900] not in {m for m, _ in common}


def test_migration_drops_the_old_sqlite_vec_tables(tmp_path):
    path = tmp_path / "legacy.db"
    conn = sqlean.connect(str(path))
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.execute("CREATE VIRTUAL TABLE vec_embeddings_384 USING vec0(embedding float[384] distance_metric=cosine)")
    conn.commit()
    conn.close()
    db = open_database(path)
    names = {r[0] for r in db.reader().execute("SELECT name FROM sqlite_master")}
    assert not any(n.startswith("vec_embeddings_384") for n in names)
    assert "vector_epoch" in names
    db.close()


def test_above_the_exact_size_the_sign_bits_pick_what_is_scored_and_the_nearest_stay(tmp_path):
    """Issue 36: over `exact_up_to` vectors a search scores exactly only the vectors nearest by sign
    bits (max(4k, 1,000) of them). On clustered vectors (96 dims: a partial last word) its top 10
    equal the exact scan's, its top 100 nearly, and every score it gives is the exact cosine."""
    db = open_database(tmp_path / "bits.db")
    rng = np.random.default_rng(5)
    centres = rng.normal(size=(60, 96)).astype(np.float32)
    vectors = (centres[rng.integers(0, 60, size=4000)] + 0.6 * rng.normal(size=(4000, 96))).astype(np.float32)
    with db.with_write_tx() as conn:
        for i, vector in enumerate(vectors):
            store.insert_memory(conn, MemoryDraft(content=f"item {i}"))
            upsert_embedding(conn, normalize_content(f"item {i}").content_hash, MODEL, vector)
    conn = db.reader()
    exact, pruned = VectorIndex(MODEL, exact_up_to=10**9), VectorIndex(MODEL, exact_up_to=1000)
    overlap = []
    for q in range(30):
        query = (vectors[q * 97] + 0.3 * rng.normal(size=96)).astype(np.float32)
        want, got = exact.search(conn, query, 100), pruned.search(conn, query, 100)
        assert [h for h, _ in got[:10]] == [h for h, _ in want[:10]]
        scores = dict(want)
        assert all(s == pytest.approx(scores[h], abs=1e-6) for h, s in got if h in scores)
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
        overlap.append(len(set(scores) & {h for h, _ in got}))
    assert sum(overlap) / len(overlap) >= 95  # 96.3 here (96 bits); 99.95 on the real model's 384
    small = VectorIndex(MODEL, exact_up_to=4000)  # at or below the size: the exact scan, equal lists
    assert small.search(conn, vectors[3], 50) == exact.search(conn, vectors[3], 50)
    db.close()
