"""Autonomous maintenance (memory-pipeline-v2 "Maintenance Worker").

A cycle: `diagnose` (queue, index, storage, embeddings → scores in [0, 1] and a composite)
→ `recommend` (repair actions with reasons) → in `execute` mode run each allowed action,
then diagnose again and record the health delta; in `observe` mode only report.

Safety rails:
- rate limits per action: a cooldown and an hourly budget (pipeline.repair);
- halt tracker: an action whose runs fail to improve the composite score
  `halt_after_non_improving` (3) times in a row is halted for the Maintainer's lifetime;
  a cycle with no recommendations (healthy) resets the tracker.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict

from kenning.core.clock import now_iso
from kenning.core.config import Settings
from kenning.core.telemetry import log_event
from kenning.pipeline import retention
from kenning.providers.embedding import EmbeddingProvider
from kenning.store import jobs as jobstore
from kenning.store.backend import StoreDatabase
from kenning.store.diagnostics import index_stats, rebuild_fts

DEAD_RATE_THRESHOLD = 0.01
TOMBSTONE_RATIO_THRESHOLD = 0.30
HOUR_S = 3600.0


@dataclass
class Recommendation:
    action: str
    reason: str
    severity: str = "warning"

    def to_dict(self) -> dict[str, str]:
        return {"action": self.action, "reason": self.reason, "severity": self.severity}


class MaintenanceReport(TypedDict):
    """Per-domain numbers and scores (queue, index, storage, embeddings) and their mean."""

    at: str
    domains: dict[str, dict[str, float | int | None]]
    score: float


class Cycle(TypedDict, total=False):
    """One maintenance cycle: the report before, the recommendations, what ran and the report after."""

    mode: str
    before: MaintenanceReport
    recommendations: list[dict[str, str]]
    actions: list[dict[str, object]]
    halted: list[str]
    after: MaintenanceReport
    delta: float


def diagnose(db: StoreDatabase, settings: Settings, embedding_model: str | None = None) -> MaintenanceReport:
    """Health report: per-domain numbers and scores, and a composite score (their mean)."""
    conn = db.reader()
    by_status = jobstore.count_by_status(db)
    jobs_total = sum(by_status.values())
    dead = by_status.get("dead", 0)
    stale = jobstore.count_stale_leases(db, settings.pipeline.worker.lease_timeout_ms)
    dead_rate = dead / jobs_total if jobs_total else 0.0
    index = index_stats(conn, embedding_model)
    total, live = index["total_memories"], index["live_memories"]
    fts_mismatch = (index["fts_missing"] or 0) + (index["fts_orphans"] or 0)
    tombstones = total - live
    tombstone_ratio = tombstones / total if total else 0.0
    missing = index.get("embeddings_missing") or 0
    domains: dict[str, dict[str, float | int | None]] = {
        "queue": {"dead": dead, "jobs": jobs_total, "dead_rate": round(dead_rate, 4), "stale_leases": stale,
                  "score": max(0.0, 1.0 - dead_rate * 10) * (0.5 if stale else 1.0)},
        "index": {"fts_rows": index["fts_rows"], "memories": total, "fts_mismatch": fts_mismatch,
                  "score": 1.0 if not fts_mismatch else max(0.0, 1.0 - fts_mismatch / max(total, 1))},
        "storage": {"tombstones": tombstones, "memories": total, "tombstone_ratio": round(tombstone_ratio, 4),
                    "score": 1.0 - min(1.0, tombstone_ratio)},
        "embeddings": {"missing": missing, "live_hashes": index.get("live_hashes", 0),
                       "score": 1.0 - min(1.0, missing / max(index.get("live_hashes") or 1, 1))},
    }
    composite = sum(d["score"] or 0.0 for d in domains.values()) / len(domains)
    return {"at": now_iso(), "domains": domains, "score": round(composite, 4)}


def recommend(report: MaintenanceReport) -> list[Recommendation]:
    """Translate a report into repair actions (v2 thresholds)."""
    d = report["domains"]
    out: list[Recommendation] = []
    if (d["queue"]["dead_rate"] or 0.0) > DEAD_RATE_THRESHOLD:
        out.append(Recommendation("requeue_dead_jobs", f"dead job rate {d['queue']['dead_rate']:.1%} > 1%"))
    if d["queue"]["stale_leases"]:
        out.append(Recommendation("release_stale_leases", f"{d['queue']['stale_leases']} stale lease(s)"))
    if d["index"]["fts_mismatch"]:
        out.append(Recommendation("check_fts_consistency",
                                  f"FTS rows differ from memories by {d['index']['fts_mismatch']}", "error"))
    if (d["storage"]["tombstone_ratio"] or 0.0) > TOMBSTONE_RATIO_THRESHOLD:
        out.append(Recommendation("trigger_retention_sweep",
                                  f"tombstones are {d['storage']['tombstone_ratio']:.0%} of memories (> 30%)"))
    if d["embeddings"]["missing"]:
        out.append(Recommendation("reembed_missing", f"{d['embeddings']['missing']} memories lack a vector"))
    return out


@dataclass
class RateLimit:
    cooldown_s: float
    hourly_budget: int
    runs: deque = field(default_factory=deque)

    def allowed(self, now: float) -> str | None:
        """None when the action may run now, else why not."""
        while self.runs and now - self.runs[0] > HOUR_S:
            self.runs.popleft()
        if self.runs and now - self.runs[-1] < self.cooldown_s:
            return f"cooldown ({self.cooldown_s - (now - self.runs[-1]):.0f} s left)"
        if len(self.runs) >= self.hourly_budget:
            return f"hourly budget of {self.hourly_budget} spent"
        return None


class Maintainer:
    """Runs maintenance cycles; owns the rate limits and the halt tracker."""

    def __init__(self, db: StoreDatabase, settings: Settings, *, embedder: EmbeddingProvider | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.db = db
        self.settings = settings
        self.embedder = embedder
        self.clock = clock
        r = settings.pipeline.repair
        requeue = (r.requeue_cooldown_ms / 1000.0, r.requeue_hourly_budget)
        reembed = (r.reembed_cooldown_ms / 1000.0, r.reembed_hourly_budget)
        heavy = (r.dedup_cooldown_ms / 1000.0, r.dedup_hourly_budget)
        self.limits = {
            "requeue_dead_jobs": RateLimit(*requeue), "release_stale_leases": RateLimit(*requeue),
            "check_fts_consistency": RateLimit(*reembed), "reembed_missing": RateLimit(*reembed),
            "trigger_retention_sweep": RateLimit(*heavy),
        }
        self.halt_after = r.halt_after_non_improving
        self.non_improving: dict[str, int] = {}
        self.halted: set[str] = set()
        self.cycles = 0
        self.last: Cycle | None = None

    # -- repair actions --------------------------------------------------------------
    def _run(self, action: str) -> dict[str, object]:
        if action == "requeue_dead_jobs":
            return {"requeued": jobstore.requeue_dead(self.db, limit=100)}
        if action == "release_stale_leases":
            return {**jobstore.reap_stale(self.db, self.settings.pipeline.worker.lease_timeout_ms)}
        if action == "check_fts_consistency":
            with self.db.with_write_tx() as conn:
                rebuild_fts(conn)
            return {"rebuilt": True}
        if action == "trigger_retention_sweep":
            return retention.sweep(self.db, self.settings.pipeline.retention)
        if action == "reembed_missing":
            return self._reembed_missing()
        raise ValueError(f"unknown maintenance action {action!r}")

    def _reembed_missing(self) -> dict[str, object]:
        from kenning.store.vectors import missing_embeddings, upsert_embedding

        if self.embedder is None:
            return {"skipped": "no embedding provider"}
        batch = self.settings.pipeline.embedding_tracker.batch_size
        rows = missing_embeddings(self.db.reader(), self.embedder.model_id, batch)
        vectors = self.embedder.embed_many([content for _, content in rows])  # outside the write tx
        with self.db.with_write_tx() as conn:
            for (content_hash, _), vector in zip(rows, vectors):
                upsert_embedding(conn, content_hash, self.embedder.model_id, vector)
        return {"embedded": len(rows)}

    # -- the cycle ---------------------------------------------------------------------
    def cycle(self, mode: str | None = None) -> Cycle:
        """diagnose → recommend → (execute: repair under limits → re-diagnose)."""
        mode = mode or self.settings.pipeline.autonomous.maintenance_mode
        self.cycles += 1
        before = self.diagnose()
        recs = recommend(before)
        result: Cycle = {"mode": mode, "before": before, "recommendations": [r.to_dict() for r in recs],
                                  "actions": [], "halted": sorted(self.halted)}
        if not recs:
            self.non_improving.clear()
            self.halted.clear()
            result["halted"] = []
        elif mode == "observe":
            log_event("maintenance", "recommendations (observe mode)", recommendations=result["recommendations"])
        else:
            result["actions"] = [self._execute(rec, before["score"]) for rec in recs]
            result["after"] = self.diagnose()
            result["delta"] = round(result["after"]["score"] - before["score"], 4)
            result["halted"] = sorted(self.halted)
        self.last = result
        return result

    def _execute(self, rec: Recommendation, score_before: float) -> dict[str, object]:
        entry: dict[str, object] = {"action": rec.action, "reason": rec.reason}
        if rec.action in self.halted:
            return {**entry, "status": "halted"}
        limit = self.limits[rec.action]
        now = self.clock()
        blocked = limit.allowed(now)
        if blocked:
            return {**entry, "status": "rate_limited", "why": blocked}
        limit.runs.append(now)
        try:
            outcome = self._run(rec.action)
        except Exception as exc:  # one failed repair must not stop the others
            outcome = {"error": f"{type(exc).__name__}: {exc}"}
        score_after = self.diagnose()["score"]
        if score_after > score_before:
            self.non_improving[rec.action] = 0
        else:
            self.non_improving[rec.action] = self.non_improving.get(rec.action, 0) + 1
            if self.non_improving[rec.action] >= self.halt_after:
                self.halted.add(rec.action)
                log_event("maintenance", f"{rec.action} halted after {self.halt_after} non-improving runs",
                          level="warning")
        log_event("maintenance", f"repair {rec.action}", outcome=outcome, score_after=score_after)
        return {**entry, "status": "error" if "error" in outcome else "done", "outcome": outcome,
                "score_after": round(score_after, 4)}

    def diagnose(self) -> MaintenanceReport:
        return diagnose(self.db, self.settings, self.embedder.model_id if self.embedder is not None else None)

    def stats(self) -> dict[str, object]:
        return {"cycles": self.cycles, "halted": sorted(self.halted), "non_improving": dict(self.non_improving),
                "last_score": self.last["before"]["score"] if self.last else None,
                "last_recommendations": self.last["recommendations"] if self.last else []}

