"""Maintenance: observe reports only, execute repairs under cooldowns/budgets, halt tracker."""

from __future__ import annotations

from kenning.core.types import MemoryDraft
from kenning.pipeline.maintenance import Maintainer, diagnose, recommend
from kenning.store import jobs as jobstore
from kenning.workers.maintenance import MaintenanceWorker


class FakeClock:
    """A controllable monotonic clock (time is an input here, not a remote service)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _dead_jobs(kenning, n):
    for i in range(n):
        jobstore.enqueue(kenning.db, "flaky", dedup_key=f"k{i}", max_attempts=1)
        job = jobstore.lease(kenning.db, ["flaky"], "w")
        jobstore.fail(kenning.db, job.id, "always fails")


def _dead_count(kenning):
    return kenning.db.reader().execute("SELECT COUNT(*) FROM memory_jobs WHERE status = 'dead'").fetchone()[0]


def test_healthy_store_has_no_recommendations(kenning):
    kenning.remember(MemoryDraft(content="A perfectly healthy memory"))
    report = diagnose(kenning.db, kenning.settings, kenning.embedder.model_id)
    assert report["score"] == 1.0 and recommend(report) == []


def test_observe_reports_and_changes_nothing(kenning):
    _dead_jobs(kenning, 3)
    result = Maintainer(kenning.db, kenning.settings).cycle(mode="observe")
    assert [r["action"] for r in result["recommendations"]] == ["requeue_dead_jobs"]
    assert result["actions"] == [] and "after" not in result
    assert _dead_count(kenning) == 3


def test_execute_repairs_then_respects_the_cooldown(kenning):
    clock = FakeClock()
    maintainer = Maintainer(kenning.db, kenning.settings, clock=clock)
    _dead_jobs(kenning, 3)
    result = maintainer.cycle(mode="execute")
    (action,) = result["actions"]
    assert action["action"] == "requeue_dead_jobs" and action["status"] == "done"
    assert action["outcome"] == {"requeued": 3} and _dead_count(kenning) == 0
    assert result["delta"] > 0
    for _ in range(3):  # the requeued jobs fail again
        jobstore.fail(kenning.db, jobstore.lease(kenning.db, ["flaky"], "w").id, "still failing")
    clock.now += 10  # inside the 60 s requeue cooldown
    again = maintainer.cycle(mode="execute")
    assert again["actions"][0]["status"] == "rate_limited" and "cooldown" in again["actions"][0]["why"]
    assert _dead_count(kenning) == 3


def test_hourly_budget_and_halt_tracker(kenning):
    clock = FakeClock()
    maintainer = Maintainer(kenning.db, kenning.settings, clock=clock)
    ids = [kenning.remember(MemoryDraft(content=f"note {i} about Jenkins pipelines")).id for i in range(4)]
    for memory_id in ids[:3]:
        kenning.forget(memory_id)  # 75 % tombstones, all inside the retention window: sweeping cannot help
    statuses = []
    for _ in range(4):
        clock.now += 601  # past the 10-minute cooldown of the heavy repair
        result = maintainer.cycle(mode="execute")
        statuses.append(result["actions"][0]["status"])
    assert statuses == ["done", "done", "done", "halted"]
    assert "trigger_retention_sweep" in maintainer.halted
    for memory_id in ids[:3]:
        kenning.recover(memory_id)
    healthy = maintainer.cycle(mode="execute")
    assert healthy["recommendations"] == [] and maintainer.halted == set()  # a healthy cycle resets it


def test_hourly_budget_blocks_extra_runs(kenning):
    clock = FakeClock()
    settings = kenning.settings.model_copy(update={"pipeline": kenning.settings.pipeline.model_copy(update={
        "repair": kenning.settings.pipeline.repair.model_copy(update={
            "requeue_hourly_budget": 2, "requeue_cooldown_ms": 5000})})})
    maintainer = Maintainer(kenning.db, settings, clock=clock)
    outcomes = []
    for i in range(3):
        jobstore.enqueue(kenning.db, "flaky2", dedup_key=f"x{i}", max_attempts=1)
        jobstore.fail(kenning.db, jobstore.lease(kenning.db, ["flaky2"], "w").id, "boom")
        clock.now += 6
        outcomes.append(maintainer.cycle(mode="execute")["actions"][0]["status"])
    assert outcomes == ["done", "done", "rate_limited"]


def test_worker_does_not_start_when_frozen(kenning):
    frozen = kenning.settings.model_copy(update={"pipeline": kenning.settings.pipeline.model_copy(update={
        "autonomous": kenning.settings.pipeline.autonomous.model_copy(update={"frozen": True})})})
    worker = MaintenanceWorker(Maintainer(kenning.db, frozen), frozen)
    worker.start()
    assert not worker.running and "frozen" in worker.stats()["waiting"]
    worker.run_once()  # still callable on demand
    assert worker.stats()["cycles"] == 1
