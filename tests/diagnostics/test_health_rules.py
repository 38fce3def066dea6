"""Health-domain rules on a real SQLite store (no daemon): the silent failures must score red."""

from __future__ import annotations

import pytest

from kenning.core import telemetry
from kenning.core.types import MemoryDraft
from kenning.diagnostics.health import predictor_domain, status_for
from kenning.diagnostics.report import Probes, build_report, composite, gather_facts
from kenning.store import jobs
from kenning.store import memories as mem_store
from kenning.store.db import open_database


@pytest.fixture
def db(settings):
    database = open_database(settings.db_path)
    telemetry.reset()
    yield database
    telemetry.reset()
    database.close()


def report(db, settings):
    return build_report(db, settings, Probes(embedding_model=None, llm_provider="offline"))


def add_memory(db, content: str) -> str:
    with db.with_write_tx() as conn:
        memory_id, _ = mem_store.insert_memory(conn, MemoryDraft(content=content), actor="test")
    return memory_id


def finish_extract_jobs(db, results: list[dict]) -> None:
    for i, result in enumerate(results):
        jobs.enqueue(db, "extract", memory_id=f"m{i}", dedup_key=f"k{i}")
        job = jobs.lease(db, ["extract"], "test-worker")
        assert jobs.complete(db, job.id, result, worker_id="test-worker")


def test_status_thresholds():
    assert [status_for(s) for s in (1.0, 0.8, 0.79, 0.5, 0.49, 0.0)] == [
        "healthy", "healthy", "degraded", "degraded", "unhealthy", "unhealthy"]


def test_fresh_store_is_healthy(db, settings):
    rep = report(db, settings)
    assert rep["domains"]["queue"]["status"] == "healthy"
    assert rep["domains"]["index"]["status"] == "healthy"
    assert rep["domains"]["predictor"]["status"] == "cold_start"
    assert rep["composite"]["status"] == "healthy"


def test_extraction_that_silently_produces_nothing_goes_red(db, settings):
    n = settings.observability.silent_failure_jobs
    finish_extract_jobs(db, [{"facts": 0, "entities": 0, "proposals": 0}] * n)
    queue = report(db, settings)["domains"]["queue"]
    assert queue["status"] == "unhealthy"
    assert any(f"last {n} extraction jobs finished but produced nothing" in p["message"] for p in queue["problems"])


def test_one_productive_job_in_the_window_keeps_it_green(db, settings):
    n = settings.observability.silent_failure_jobs
    finish_extract_jobs(db, [{"facts": 0, "entities": 0}] * (n - 1) + [{"facts": 2, "entities": 1}])
    assert report(db, settings)["domains"]["queue"]["status"] == "healthy"


def test_skipped_jobs_do_not_count_as_empty(db, settings):
    n = settings.observability.silent_failure_jobs
    finish_extract_jobs(db, [{"memory_id": "x", "skipped": "too short"}] * n)
    assert report(db, settings)["domains"]["queue"]["status"] == "healthy"


def test_extraction_errors_in_the_ring_go_red(db, settings):
    for i in range(settings.observability.silent_failure_jobs):
        telemetry.record_error("extraction", f"LLM returned garbage #{i}", memory_id=f"m{i}")
    queue = report(db, settings)["domains"]["queue"]
    assert queue["status"] == "unhealthy"


def test_dead_jobs_degrade_the_queue(db, settings):
    jobs.enqueue(db, "extract", memory_id="m1", max_attempts=1)
    job = jobs.lease(db, ["extract"], "w")
    jobs.fail(db, job.id, "boom", worker_id="w")
    queue = report(db, settings)["domains"]["queue"]
    assert queue["metrics"]["dead"] == 1 and queue["score"] < 1.0
    assert any("dead job" in p["message"] for p in queue["problems"])


def test_stalled_queue_is_flagged(db, settings):
    jobs.enqueue(db, "extract", memory_id="m1")
    with db.with_write_tx() as conn:
        conn.execute("UPDATE memory_jobs SET created_at = '2020-01-01T00:00:00.000Z'")
    queue = report(db, settings)["domains"]["queue"]
    assert queue["status"] != "healthy"
    assert any("oldest pending job waited" in p["message"] for p in queue["problems"])


def test_exact_duplicates_and_dangling_supersession(db, settings):
    a = add_memory(db, "Staging runs on Fly.io")
    b = add_memory(db, "Production runs on AWS")
    with db.with_write_tx() as conn:  # a bug that bypassed dedup, and a winner that vanished
        conn.execute("UPDATE memories SET content_hash = (SELECT content_hash FROM memories WHERE id = ?)"
                     " WHERE id = ?", (a, b))
        conn.execute("UPDATE memories SET superseded_by = 'ghost' WHERE id = ?", (a,))
    rep = report(db, settings)
    assert rep["domains"]["duplicate"]["status"] != "healthy"
    assert rep["domains"]["duplicate"]["metrics"]["duplicate_rows"] == 1
    assert rep["domains"]["mutation"]["metrics"]["dangling_supersessions"] == 1
    assert rep["composite"]["status"] != "healthy"


def test_composite_is_capped_by_the_worst_counted_domain():
    doms = {"a": {"score": 1.0, "status": "healthy"}, "b": {"score": 1.0, "status": "healthy"},
            "c": {"score": 0.3, "status": "unhealthy"}, "p": {"score": 0.0, "status": "disabled"}}
    assert composite(doms) == {"score": 0.49, "status": "unhealthy"}
    doms["c"] = {"score": 0.7, "status": "degraded"}
    assert composite(doms)["status"] == "degraded"
    doms["c"] = {"score": 0.6, "status": "cold_start"}
    assert composite(doms) == {"score": 1.0, "status": "healthy"}


@pytest.mark.parametrize("status, expect_status, low, high", [
    ({"mode": "collecting", "training_sessions": 3, "min_training_sessions": 10,
      "sidecar": {"running": True, "pid": 1}}, "cold_start", 0.6, 0.6),
    ({"mode": "active", "success_rate": 0.8, "alpha": 0.2, "training_sessions": 40,
      "min_training_sessions": 10, "sidecar": {"running": True}}, "healthy", 0.99, 1.0),
    ({"mode": "active", "success_rate": 0.3, "alpha": 0.7, "training_sessions": 40,
      "min_training_sessions": 10, "sidecar": {"running": True}}, "degraded", 0.6, 0.6),
    ({"mode": "active", "success_rate": 0.8, "sidecar": {"running": False}}, "unhealthy", 0.0, 0.0),
    ({"mode": "collecting", "training_sessions": 2, "min_training_sessions": 10,
      "sidecar": {"running": False, "waiting": "starts once 10 usable sessions exist (2 so far)"}},
     "cold_start", 0.6, 0.6),
    ({"enabled": True, "mode": "crash_disabled", "sidecar": {"running": False, "disabled": True, "crashes_last_hour": 3}},
     "unhealthy", 0.0, 0.0),  # enabled but disabled by crashes: red, not informational (issue 12)
    ({"mode": "retraining", "success_rate": 0.2, "training_sessions": 40, "sidecar": {"running": True}},
     "degraded", 0.6, 0.6),
])
def test_predictor_health_rules(db, settings, status, expect_status, low, high):
    facts = gather_facts(db, settings)
    facts.predictor = status
    domain = predictor_domain(facts).as_dict()
    assert domain["status"] == expect_status and low <= domain["score"] <= high


def test_predictor_latency_over_timeout_and_errors_cost_score(db, settings):
    for _ in range(20):
        telemetry.record_latency("predictor_score", 500.0)
    telemetry.record_error("predictor", "predictor_timeout", timeout_ms=120)
    facts = gather_facts(db, settings)
    facts.predictor = {"mode": "active", "success_rate": 0.8, "training_sessions": 40,
                       "min_training_sessions": 10, "sidecar": {"running": True}}
    domain = predictor_domain(facts).as_dict()
    messages = " ".join(p["message"] for p in domain["problems"])
    assert "exceeds the 120 ms timeout" in messages and "predictor error" in messages
    assert domain["score"] < 0.8 and domain["status"] == "degraded"


def test_predictor_disabled_in_config(db, settings):
    facts = gather_facts(db, settings)
    facts.predictor_settings = {**facts.predictor_settings, "enabled": False}
    assert predictor_domain(facts).as_dict()["status"] == "disabled"


def test_probe_failure_becomes_a_problem_not_an_exception(db, settings):
    def broken():
        raise RuntimeError("sidecar pipe closed")

    rep = build_report(db, settings, Probes(predictor_status=broken))
    pred = rep["domains"]["predictor"]
    assert pred["status"] == "unhealthy" and pred["metrics"]["error"].endswith("sidecar pipe closed")


def test_disk_full_turns_storage_red_and_nearly_full_warns(db, settings):
    from kenning.diagnostics.health import storage_domain

    facts = gather_facts(db, settings)
    assert facts.disk["total"] > 0 and storage_domain(facts).as_dict()["metrics"]["disk"] == facts.disk
    facts.disk = {"total": 10 * 2**30, "free": 4096, "used_pct": 100.0}
    full = storage_domain(facts).as_dict()
    assert full["status"] == "unhealthy" and "disk is full" in full["problems"][0]["message"]
    facts.disk = {"total": 10 * 2**30, "free": 2**28, "used_pct": 97.5}
    nearly = storage_domain(facts).as_dict()
    assert nearly["status"] != "unhealthy" and any("97.5% full" in p["message"] for p in nearly["problems"])


def test_a_crash_disabled_predictor_makes_the_composite_red(db, settings):
    from kenning.diagnostics.health import DOMAINS

    facts = gather_facts(db, settings)
    facts.predictor = {"enabled": True, "mode": "crash_disabled", "sidecar": {"running": False, "disabled": True}}
    domains = {name: fn(facts).as_dict() for name, fn in DOMAINS.items()}
    assert domains["predictor"]["status"] == "unhealthy"
    assert composite(domains)["status"] == "unhealthy"
    facts.predictor = None
    facts.predictor_settings = {**facts.predictor_settings, "enabled": False}
    domains = {name: fn(facts).as_dict() for name, fn in DOMAINS.items()}
    assert domains["predictor"]["status"] == "disabled"  # the user's choice: shown, not counted


def test_the_report_on_postgresql_reads_the_home_disk(pg_url, home):
    """On PostgreSQL the store's path is the server's URL (no file, no parent folder): the report still
    builds, with the disk of kenning's home and no database file size (the server holds the data)."""
    from kenning.core.config import load_settings
    from kenning.core.config_store import StoreSettings
    from kenning.store.factory import open_store

    settings = load_settings(environ={"KENNING_HOME": str(home)}, store={"backend": "postgres", "url": pg_url})
    database = open_store(StoreSettings(backend="postgres", url=pg_url), settings.db_path)
    try:
        facts = gather_facts(database, settings)
        built = report(database, settings)
    finally:
        database.close()
    assert isinstance(database.path, str) and "postgres" in database.path
    assert facts.disk["total"] > 0 and 0 <= facts.disk["used_pct"] <= 100
    assert facts.db_bytes == 0
    assert built["composite"]["score"] is not None
