"""The store backend setting: validation, clear errors for a server that cannot serve, and the
backend-specific operations (job leases across handles, BM25 ranking) behaving alike."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kenning.core.config import load_settings
from kenning.core.config_store import StoreSettings
from kenning.core.errors import ConfigError, StoreError
from kenning.core.types import MemoryDraft
from kenning.store import jobs
from kenning.store import memories as store
from kenning.store.factory import open_store
from kenning.store.search import bm25_search


@pytest.mark.parametrize("store, message", [
    ({"backend": "postgres"}, "needs store.url"),
    ({"backend": "postgres", "url": "mysql://u@h/db"}, "must start with postgresql://"),
    ({"backend": "postgres", "url": "postgresql://u@h:99999/db"}, "bad port"),
    ({"backend": "postgres", "url": "postgresql://u@h:5432/"}, "names no database"),
    ({"backend": "sqlite", "url": "postgresql://u@h/db"}, "only read with store.backend: postgres"),
    ({"backend": "oracle"}, "store.backend"),
])
def test_bad_store_settings_are_one_clear_line(tmp_path, store, message):
    with pytest.raises(ConfigError) as error:
        load_settings(environ={"KENNING_HOME": str(tmp_path)}, store=store)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_sqlite_stays_the_default(tmp_path):
    settings = load_settings(environ={"KENNING_HOME": str(tmp_path)})
    assert settings.store.backend == "sqlite" and settings.store.url is None


def test_an_unreachable_postgres_server_is_named_without_its_password(tmp_path, unused_port):
    url = f"postgresql://kenning:hunter2@127.0.0.1:{unused_port}/kenning"
    with pytest.raises(StoreError) as error:
        open_store(StoreSettings(backend="postgres", url=url), tmp_path / "unused.db")
    text = str(error.value)
    assert text.startswith(f"cannot reach PostgreSQL at postgresql://kenning:***@127.0.0.1:{unused_port}/kenning")
    assert "hunter2" not in text


def test_a_postgres_server_where_pgvector_cannot_be_enabled_says_so(pg_server, tmp_path):
    """A role that may not create extensions, on a database without pgvector."""
    import psycopg

    with psycopg.connect(pg_server.url(), autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS plain_user")
        conn.execute("CREATE ROLE plain_user LOGIN")
    url = pg_server.create_database("no_vector")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("GRANT ALL ON SCHEMA public TO plain_user")
    plain = url.replace("postgres@", "plain_user@")
    with pytest.raises(StoreError, match="cannot enable pgvector .*CREATE EXTENSION vector") as error:
        open_store(StoreSettings(backend="postgres", url=plain), tmp_path / "unused.db")
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_concurrent_leases_take_each_job_exactly_once(store_config, tmp_path):
    """Two handles (two daemons) and eight threads leasing at once: no job twice, none lost."""
    handles = [open_store(StoreSettings(**store_config), tmp_path / "j.db") for _ in range(2)]
    for i in range(60):
        jobs.enqueue(handles[0], "work", dedup_key=f"job-{i}")
    taken: list[int] = []
    lock = threading.Lock()

    def worker(db, name):
        while (job := jobs.lease(db, ["work"], name)) is not None:
            assert jobs.complete(db, job.id, {"by": name}, worker_id=name)
            with lock:
                taken.append(job.id)

    threads = [threading.Thread(target=worker, args=(handles[i % 2], f"w{i}")) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(taken) == sorted(set(taken)) and len(taken) == 60
    assert jobs.queue_depths(handles[1])["work"]["completed"] == 60
    for db in handles:
        db.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_bm25_prefers_the_rare_term_and_the_short_document(db):
    """BM25's two signatures, IDF and length normalisation, on both backends."""
    with db.with_write_tx() as conn:
        rare, _ = store.insert_memory(conn, MemoryDraft(content="the zeppelin hangar leaks"))
        short, _ = store.insert_memory(conn, MemoryDraft(content="deploy kafka"))
        long, _ = store.insert_memory(conn, MemoryDraft(
            content="deploy kafka after the migration window closes and the on-call engineer signs off"))
        for i in range(30):
            store.insert_memory(conn, MemoryDraft(content=f"deploy note {i} for the service"))
    ranked = [memory_id for memory_id, _ in bm25_search(db.reader(), "deploy zeppelin", limit=5)]
    assert ranked[0] == rare  # 'zeppelin' is in one document, 'deploy' in 32
    ranked = [memory_id for memory_id, _ in bm25_search(db.reader(), "kafka", limit=5)]
    assert ranked == [short, long]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_storage_diagnostics_answer_on_both_backends(db):
    from kenning.store.diagnostics import storage_stats, table_columns

    with db.with_write_tx() as conn:
        store.insert_memory(conn, MemoryDraft(content="diagnostics see this memory"))
    stats = storage_stats(db.reader())
    assert stats["integrity"] == ["ok"] and stats["journal_mode"] == "wal" and stats["page_count"] > 0
    assert stats["schema_version"] >= 60
    assert {"content", "author", "team"} <= table_columns(db.reader(), "memories")
    if db.backend == "postgres":  # the invariant it checks: one full-text row per memory
        db.reader().raw.execute("DELETE FROM memories_fts")
        assert storage_stats(db.reader())["integrity"] == ["1 memories but 0 full-text rows"]
