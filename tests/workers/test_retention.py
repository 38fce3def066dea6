"""Retention sweep: strict order, batch limits, orphaned graph entities, shared vectors kept."""

from __future__ import annotations

from datetime import timedelta

from kenning.core.clock import to_iso, utcnow
from kenning.core.types import MemoryDraft
from kenning.pipeline.retention import STEPS, sweep
from kenning.store import graph as graph_store
from kenning.store import jobs as jobstore
from kenning.workers.retention import RetentionWorker


def _age_tombstones(kenning, ids, days):
    old = to_iso(utcnow() - timedelta(days=days))
    with kenning.db.with_write_tx() as conn:
        conn.executemany("UPDATE memories SET is_deleted = 1, deleted_at = ? WHERE id = ?", [(old, i) for i in ids])


def _count(kenning, sql, *args):
    return kenning.db.reader().execute(sql, args).fetchone()[0]


def test_sweep_purges_in_order_within_batch_limits(kenning):
    ids = [kenning.remember(MemoryDraft(content=f"Service{i} talks to Zookeeper{i} over gRPC")).id for i in range(7)]
    keep = kenning.remember(MemoryDraft(content="Service0 talks to Zookeeper0 over gRPC!", project="other")).id
    _age_tombstones(kenning, ids, days=40)
    fresh = kenning.remember(MemoryDraft(content="recently forgotten note about Kibana")).id
    kenning.forget(fresh)  # tombstoned today: inside the 30-day window, kept
    cfg = kenning.settings.pipeline.retention.model_copy(update={"batch_limit": 3})

    first = sweep(kenning.db, cfg)
    assert first["order"] == list(STEPS)
    assert first["steps"]["tombstones"] == 3 and first["more"]
    assert first["steps"]["graph_links"]["mentions"] > 0
    assert sweep(kenning.db, cfg)["steps"]["tombstones"] == 3
    last = sweep(kenning.db, cfg)
    assert last["steps"]["tombstones"] == 1 and not last["more"]
    assert sweep(kenning.db, cfg)["steps"]["tombstones"] == 0

    assert _count(kenning, "SELECT COUNT(*) FROM memories WHERE id IN (%s)" % ",".join("?" * 7), *ids) == 0
    assert _count(kenning, "SELECT COUNT(*) FROM memories WHERE id = ?", fresh) == 1
    assert _count(kenning, "SELECT COUNT(*) FROM memories WHERE id = ?", keep) == 1
    conn = kenning.db.reader()
    assert graph_store.find_entity(conn, "Zookeeper3") is None  # orphaned entities go
    assert graph_store.find_entity(conn, "Zookeeper0").mentions == 1  # still mentioned by `keep`
    assert graph_store.find_entity(conn, "gRPC").mentions == 1
    assert _count(kenning, "SELECT COUNT(*) FROM memories_fts WHERE memories_fts MATCH 'zookeeper3'") == 0
    purged = _count(kenning, "SELECT COUNT(*) FROM memory_history WHERE event = 'purged'")
    assert purged == 7


def test_sweep_keeps_vectors_shared_with_live_memories(kenning):
    dead = kenning.remember(MemoryDraft(content="Shared sentence about Terraform state", project="a")).id
    kenning.remember(MemoryDraft(content="Shared sentence about Terraform state", project="b"))
    gone = kenning.remember(MemoryDraft(content="Unique sentence about Vault tokens", project="a")).id
    _age_tombstones(kenning, [dead, gone], days=31)
    before = _count(kenning, "SELECT COUNT(*) FROM embeddings")
    result = sweep(kenning.db, kenning.settings.pipeline.retention)
    assert result["steps"]["embeddings"] == 1
    assert _count(kenning, "SELECT COUNT(*) FROM embeddings") == before - 1


def test_history_and_job_retention(kenning):
    kenning.remember(MemoryDraft(content="A memory whose history row is ancient"))
    ancient = to_iso(utcnow() - timedelta(days=400))
    with kenning.db.with_write_tx() as conn:
        conn.execute("UPDATE memory_history SET created_at = ?", (ancient,))
    done_id, _ = jobstore.enqueue(kenning.db, "test_job", dedup_key="done")
    dead_id, _ = jobstore.enqueue(kenning.db, "test_job", dedup_key="dead", max_attempts=1)
    for job_id in (done_id, dead_id):
        job = jobstore.lease(kenning.db, ["test_job"], "w")
        if job.id == done_id:
            jobstore.complete(kenning.db, job.id, {})
        else:
            jobstore.fail(kenning.db, job.id, "boom")
    with kenning.db.with_write_tx() as conn:
        conn.execute("UPDATE memory_jobs SET completed_at = ?, failed_at = ?", (ancient, ancient))
    worker = RetentionWorker(kenning.db, kenning.settings.pipeline.retention)
    worker.run_once()
    steps = worker.last_sweep["steps"]
    assert steps["history"] >= 1 and steps["completed_jobs"] == 1 and steps["dead_jobs"] == 1
    assert worker.stats()["totals"]["completed_jobs"] == 1 and worker.last_error is None
