"""The pipeline status report behind GET /api/pipeline/status and `kenning pipeline status`.

Workers (running, counters, waiting reason), queue depths per job type and status, stale
leases, dead jobs (count + most recent with their last error), the daily token budget, the
mode and flags — and, when something waits, a plain sentence saying why.
"""

from __future__ import annotations

from kenning.core.config_pipeline import PipelineSettings
from kenning.providers.budget import BudgetedProvider
from kenning.store import jobs
from kenning.store.backend import StoreDatabase
from kenning.store.sessions import SUMMARY_JOB
from kenning.workers.manager import WorkerManager

RECENT_DEAD = 20


def _dead_jobs(db: StoreDatabase) -> list[dict[str, object]]:
    keep = ("id", "job_type", "memory_id", "document_id", "attempts", "max_attempts", "last_error",
            "failed_at", "created_at")
    return [{k: j.to_dict()[k] for k in keep} for j in jobs.list_jobs(db, status="dead", limit=RECENT_DEAD)]


def pipeline_status(s: PipelineSettings, db: StoreDatabase, manager: WorkerManager | None,
                    llm: BudgetedProvider | None) -> dict[str, object]:
    depths = jobs.queue_depths(db)
    totals = {status: sum(d[status] for d in depths.values()) for status in jobs.STATUSES}
    workers = manager.stats() if manager is not None else {}
    budget = llm.budget.status() if llm is not None else None
    waiting = sorted({str(w["waiting"]) for w in workers.values() if w.get("waiting")})
    held = totals["pending"] - depths.get(SUMMARY_JOB, {}).get("pending", 0)  # summaries run regardless
    if not s.enabled and held:
        waiting.append(f"pipeline disabled (pipeline.enabled: false): {held} job(s) wait")
    return {
        "enabled": s.enabled,
        "mode": s.mode,
        "flags": {
            "enabled": s.enabled, "shadow_mode": s.shadow_mode, "mutations_frozen": s.mutations_frozen,
            "allow_update_delete": s.autonomous.allow_update_delete, "autonomous_frozen": s.autonomous.frozen,
            "semantic_contradiction_enabled": s.semantic_contradiction_enabled,
        },
        "provider": llm.describe() if llm is not None else None,
        "workers": workers,
        "queue": {
            "by_type": depths, "totals": totals,
            "stale_leases": jobs.count_stale_leases(db, s.worker.lease_timeout_ms),
            "oldest_pending_age_s": jobs.oldest_pending_age_s(db),
        },
        "dead_jobs": {"count": totals["dead"], "recent": _dead_jobs(db)},
        "token_budget": budget,
        "waiting": waiting,
        "healthy": True,
    }
