"""The store on both backends (a real SQLite file, a real PostgreSQL database): migrations,
dedup, FTS sync, tombstones, history, concurrency."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from kenning.core.errors import InvalidInput, NotFound
from kenning.core.text import normalize_content
from kenning.core.types import MemoryDraft, MemoryFilter
from kenning.store import memories as store
from kenning.core.config_store import StoreSettings
from kenning.store.factory import open_store
from kenning.store.db import open_database
from kenning.store.migrations import discover, for_backend, migrate
from kenning.store.search import bm25_search, vector_search
from kenning.store.vectors import upsert_embedding


def add(db, content, **kw):
    with db.with_write_tx() as conn:
        return store.insert_memory(conn, MemoryDraft(content=content, **kw))


def fts_ids(db, query):
    return [i for i, _ in bm25_search(db.reader(), query, MemoryFilter(include_deleted=True))]


def test_migrations_are_versioned_and_rerun_is_a_no_op(db, store_config, tmp_path):
    conn = db.reader()
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [m.version for m in for_backend(db.backend)]
    assert {m.version for m in discover()} <= set(versions)  # every SQLite migration, on each backend
    add(db, "survives re-migration")
    assert migrate(db) == []
    again = open_store(StoreSettings(**store_config), tmp_path / "m.db")
    assert migrate(again) == []
    assert again.reader().execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 1
    again.close()


def test_pragmas_and_migrations_are_idempotent(tmp_path):
    path = tmp_path / "m.db"
    db = open_database(path)
    conn = db.reader()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    assert versions == [m.version for m in discover()]
    add(db, "survives re-migration")
    assert migrate(db) == []  # second run is a no-op
    db.close()
    again = open_database(path)
    assert [r[0] for r in again.reader().execute("SELECT version FROM schema_migrations ORDER BY version")] == versions
    assert again.reader().execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 1
    again.close()


def test_normalization_and_hash():
    a = normalize_content("  We use   Postgres.  ")
    b = normalize_content("we use postgres!!")
    assert a.storage == "We use Postgres."
    assert a.normalized == "we use postgres"
    assert a.content_hash == b.content_hash and len(a.content_hash) == 64


def test_exact_duplicates_are_not_stored_twice(db):
    first, deduped1 = add(db, "Deploys go through the staging cluster", project="p")
    second, deduped2 = add(db, "deploys go through the  staging cluster.", project="p")
    other, deduped3 = add(db, "Deploys go through the staging cluster", project="q")
    assert (deduped1, deduped2, deduped3) == (False, True, False)
    assert first == second != other
    assert db.reader().execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 2


def test_fts_stays_in_sync_after_edit_delete_and_purge(db):
    memory_id, _ = add(db, "the cache uses redis")
    assert fts_ids(db, "redis") == [memory_id]
    with db.with_write_tx() as conn:
        store.update_memory(conn, memory_id, {"content": "the cache uses memcached"})
    assert fts_ids(db, "redis") == []
    assert fts_ids(db, "memcached") == [memory_id]
    with db.with_write_tx() as conn:
        store.soft_delete(conn, memory_id)
    assert bm25_search(db.reader(), "memcached") == []  # tombstones are filtered
    with db.with_write_tx() as conn:
        store.purge_memory(conn, memory_id)
    assert fts_ids(db, "memcached") == []
    if db.backend == "sqlite":
        integrity = db.reader().execute(
            "INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)"
        )
        assert integrity is not None
    else:  # the trigger-kept side table holds exactly the live rows
        assert db.reader().execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0] == 0


def test_tombstone_recover_purge_and_history(db):
    memory_id, _ = add(db, "feature flags live in launchdarkly")
    with db.with_write_tx() as conn:
        forgotten = store.soft_delete(conn, memory_id, reason="obsolete")
    assert forgotten.is_deleted and forgotten.deleted_at
    live, _ = store.list_memories(db.reader())
    assert memory_id not in [m.id for m in live]
    with db.with_write_tx() as conn:
        assert not store.recover_memory(conn, memory_id).is_deleted
    with db.with_write_tx() as conn:
        store.purge_memory(conn, memory_id)
    with pytest.raises(NotFound):
        store.get_memory(db.reader(), memory_id)
    events = [h["event"] for h in store.history(db.reader(), memory_id)]
    assert events == ["created", "deleted", "recovered", "purged"]


def test_edit_records_old_and_new_values(db):
    memory_id, _ = add(db, "retry three times", importance=0.4)
    with db.with_write_tx() as conn:
        store.update_memory(conn, memory_id, {"content": "retry five times", "importance": 0.9})
    last = store.history(db.reader(), memory_id)[-1]
    assert last["event"] == "updated"
    assert (last["old_content"], last["new_content"]) == ("retry three times", "retry five times")
    assert last["changes"]["importance"] == [0.4, 0.9]
    with pytest.raises(InvalidInput):
        with db.with_write_tx() as conn:
            store.update_memory(conn, memory_id, {"content_hash": "x"})


def test_failed_transaction_rolls_back(db):
    with pytest.raises(RuntimeError):
        with db.with_write_tx() as conn:
            store.insert_memory(conn, MemoryDraft(content="never committed"))
            raise RuntimeError("boom")
    assert db.reader().execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 0


def test_filters(db):
    add(db, "alpha service uses kafka", project="a", type="fact", tags=["infra"], created_at="2024-01-01T00:00:00Z")
    add(db, "beta service uses kafka", project="b", type="decision", tags=["infra", "db"], created_at="2025-01-01T00:00:00Z")
    conn = db.reader()
    contents = lambda f: sorted(store.get_memories(conn, [i for i, _ in bm25_search(conn, "kafka", f)]).values(), key=lambda m: m.content)
    assert [m.project for m in contents(MemoryFilter(project="a"))] == ["a"]
    assert [m.project for m in contents(MemoryFilter(types=["decision"]))] == ["b"]
    assert [m.project for m in contents(MemoryFilter(tags=["db"]))] == ["b"]
    assert [m.project for m in contents(MemoryFilter(since="2024-06-01T00:00:00Z"))] == ["b"]
    assert [m.project for m in contents(MemoryFilter(until="2024-06-01"))] == ["a"]


def test_vector_search_respects_filters_and_models(db):
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(30, 8)).astype(np.float32)
    ids = []
    with db.with_write_tx() as conn:
        for i, vec in enumerate(vectors):
            memory_id, _ = store.insert_memory(conn, MemoryDraft(content=f"memory {i}", project="even" if i % 2 == 0 else "odd"))
            upsert_embedding(conn, normalize_content(f"memory {i}").content_hash, "test-model", vec)
            ids.append(memory_id)
    conn = db.reader()
    hits = vector_search(conn, vectors[3], "test-model", MemoryFilter(), limit=5)
    assert hits[0][0] == ids[3] and hits[0][1] == pytest.approx(1.0, abs=1e-5)
    odd = vector_search(conn, vectors[4], "test-model", MemoryFilter(project="odd"), limit=5)
    assert odd and all(int(store.get_memory(conn, i).content.split()[1]) % 2 == 1 for i, _ in odd)
    assert vector_search(conn, vectors[3], "other-model", MemoryFilter(), limit=5) == []


def test_concurrent_writers_never_see_locked(store_config, tmp_path):
    """Two Database handles (two 'processes') and many threads writing at once."""
    path = tmp_path / "c.db"
    first, second = (open_store(StoreSettings(**store_config), path) for _ in range(2))
    errors: list[Exception] = []

    def writer(db, prefix):
        try:
            for i in range(40):
                with db.with_write_tx() as conn:
                    store.insert_memory(conn, MemoryDraft(content=f"{prefix} note {i}"))
        except Exception as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(db, f"{db_i}-{t}")) for db_i, db in enumerate((first, second)) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert first.reader().execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 240
    first.close()
    second.close()
