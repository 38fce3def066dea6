"""Health domains: each turns store facts and telemetry into a 0–1 score, a status and fixes.

Scoring convention (predictive-memory-scorer seed §4.1): >= 0.8 healthy, 0.5–0.8 degraded,
< 0.5 unhealthy (red); the predictor may also be `cold_start` or `disabled`. The rule that
shapes every domain: a pipeline that silently produces nothing must score red, never green.

Red versus informational (what `kenning doctor`'s exit code follows): `disabled` means the user
turned the predictor off in config (`predictor.enabled: false`) and `cold_start` that it is still
collecting data; both are expected, shown, and left out of the composite. A predictor that is
enabled but not running — its sidecar dead, or disabled by the crash threshold — is a failure:
`unhealthy`, counted, and one unhealthy domain makes the composite unhealthy, so the doctor
exits 2. The storage domain is red when the disk holding the home is full (< 1 MiB free).
Each domain is a pure function of a `Facts` bundle so it can be tested without a daemon.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypedDict

from kenning.core import telemetry
from kenning.core.clock import parse_iso, utcnow
from kenning.core.config_observability import ObservabilitySettings
from kenning.diagnostics.analytics import OperationLatency
from kenning.predictor.status import sidecar_verdict
from kenning.store import diagnostics as sql

HEALTHY = 0.8
DEGRADED = 0.5
DISK_FULL_BYTES = 1024 * 1024  # below 1 MiB free the disk counts as full (100 %): storage is red
DISK_WARN_PCT = 95.0


def status_for(score: float) -> str:
    if score >= HEALTHY:
        return "healthy"
    if score >= DEGRADED:
        return "degraded"
    return "unhealthy"


@dataclass
class Problem:
    severity: str  # "error" (makes the domain red) or "warning"
    message: str
    fix: str

    def as_dict(self) -> ProblemReport:
        return {"severity": self.severity, "message": self.message, "fix": self.fix}


class ProblemReport(TypedDict):
    severity: str
    message: str
    fix: str


class DomainReport(TypedDict):
    """One domain of the diagnostics report (`Domain.as_dict`)."""

    domain: str
    score: float
    status: str
    summary: str
    metrics: dict[str, Any]
    problems: list[ProblemReport]


@dataclass
class Domain:
    name: str
    score: float = 1.0
    status: str | None = None
    summary: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def penalize(self, amount: float, message: str, fix: str, severity: str = "warning") -> None:
        self.score -= amount
        self.problems.append(Problem(severity, message, fix))

    def cap(self, ceiling: float, message: str, fix: str) -> None:
        """A failure that must show red whatever else looks fine."""
        self.score = min(self.score, ceiling)
        self.problems.append(Problem("error" if ceiling < DEGRADED else "warning", message, fix))

    def as_dict(self) -> DomainReport:
        score = round(max(0.0, min(1.0, self.score)), 3)
        return {
            "domain": self.name,
            "score": score,
            "status": self.status or status_for(score),
            "summary": self.summary,
            "metrics": self.metrics,
            "problems": [p.as_dict() for p in self.problems],
        }


@dataclass
class Facts:
    """Everything the domains look at, gathered once per report."""

    now: str
    thresholds: ObservabilitySettings
    storage: sql.StorageStats
    index: sql.IndexStats
    duplicates: sql.DuplicateStats
    mutations: sql.MutationStats
    queue: sql.QueueStats
    job_outcomes: list[sql.JobOutcome]
    sessions: sql.SessionStats
    errors: list[telemetry.ErrorEntry]  # telemetry error ring, newest first
    logs: list[dict[str, object]]  # telemetry logs, newest first
    latency: dict[str, OperationLatency]  # per-operation percentiles
    db_bytes: int = 0
    wal_bytes: int = 0
    embedding: dict[str, Any] = field(default_factory=dict)  # {"model", "ok", "error"}
    llm: dict[str, Any] = field(default_factory=dict)  # {"provider", "available", "budget_left"}
    predictor: dict[str, Any] | None = None  # the predictor component's status, if any
    predictor_tables: sql.PredictorTableStats | dict[str, object] = field(default_factory=dict)
    predictor_settings: dict[str, Any] = field(default_factory=dict)
    scored_sessions: int = 0
    connector: dict[str, Any] = field(default_factory=dict)  # {"claude_code_installed": bool|None}
    workers: dict[str, Any] | None = None
    disk: dict[str, Any] = field(default_factory=dict)  # {"total", "free", "used_pct"} of the home's disk


def _recent_errors(facts: Facts, *stages: str) -> list[telemetry.ErrorEntry]:
    cutoff = utcnow() - timedelta(minutes=facts.thresholds.error_window_minutes)
    return [e for e in facts.errors if e["stage"] in stages and parse_iso(e["at"]) >= cutoff]


def _age_minutes(facts: Facts, stamp: str | None) -> float | None:
    if not stamp:
        return None
    return (parse_iso(facts.now) - parse_iso(stamp)).total_seconds() / 60.0


# -- queue -------------------------------------------------------------------------
def queue_domain(facts: Facts) -> Domain:
    d = Domain("queue")
    tables = facts.queue.get("tables", {})
    pending = dead = 0
    for name, stats in tables.items():  # memory_jobs: pipeline jobs and session summaries, one queue
        by = stats.get("by_status", {})
        pending += by.get("pending", 0)
        dead += by.get("dead", 0)
        age = _age_minutes(facts, stats.get("oldest_pending_at"))
        if age is not None and age > facts.thresholds.stalled_queue_minutes:
            d.penalize(0.35, f"{name}: oldest pending job waited {age:.0f} min",
                       "workers are not draining the queue: check `kenning doctor` pipeline worker "
                       "state and restart the daemon (`kenning stop && kenning serve`)", "error")
        if stats.get("expired_leases"):
            d.penalize(0.15, f"{name}: {stats['expired_leases']} job(s) hold an expired lease",
                       "a worker died mid-job; the stale-lease reaper requeues them, restart the daemon if not")
    if dead:
        d.penalize(min(0.4, 0.05 * dead), f"{dead} dead job(s) exhausted their retries",
                   "inspect them in the Pipeline tab (/api/pipeline/status) and fix the error they show")
    outcomes = facts.job_outcomes
    known = [o for o in outcomes if o.get("produced") is not None]
    n = facts.thresholds.silent_failure_jobs
    if len(known) >= n and all(o["produced"] == 0 for o in known[:n]):
        d.cap(0.3, f"the last {n} extraction jobs finished but produced nothing",
              "extraction is silently failing: check the LLM provider (`kenning doctor`), the "
              "pipeline mode, and the extraction errors in /api/analytics/errors?stage=extraction")
    extraction_errors = _recent_errors(facts, "extraction", "decision")
    if len(extraction_errors) >= n:
        d.cap(0.3, f"{len(extraction_errors)} extraction/decision errors in the error window",
              "see /api/analytics/errors?stage=extraction for the messages")
    elif extraction_errors:
        d.penalize(min(0.3, 0.03 * len(extraction_errors)),
                   f"{len(extraction_errors)} recent extraction/decision error(s)",
                   "see /api/analytics/errors?stage=extraction")
    d.metrics = {"pending": pending, "dead": dead, "tables": tables,
                 "recent_outcomes": outcomes[:n]}
    d.summary = f"{pending} pending, {dead} dead"
    return d


# -- storage -------------------------------------------------------------------------
def storage_domain(facts: Facts) -> Domain:
    d = Domain("storage")
    s = facts.storage
    if s.get("integrity") != ["ok"]:
        d.cap(0.0, f"integrity check failed: {'; '.join(s.get('integrity') or ['no answer'])}",
              "stop the daemon, back up memories.db, then `sqlite3 memories.db '.recover'` into a new file")
    if str(s.get("journal_mode", "")).lower() != "wal":
        d.penalize(0.3, f"journal_mode is {s.get('journal_mode')}, not WAL",
                   "restart the daemon; it sets WAL on open (readers block writers without it)")
    pages = s.get("page_count") or 0
    free = s.get("freelist_count") or 0
    if pages > 1000 and free / pages > 0.3:
        d.penalize(0.15, f"{free / pages:.0%} of the database file is free pages",
                   "run `VACUUM` while the daemon is stopped to reclaim space")
    disk = facts.disk
    if disk.get("total"):
        if disk["free"] < DISK_FULL_BYTES:
            d.cap(0.0, f"disk is full ({disk['free']} bytes free of {disk['total']}): writes fail with 507",
                  "free space on the disk holding KENNING_HOME (or move the home to a larger disk)")
        elif disk["used_pct"] >= DISK_WARN_PCT:
            d.penalize(0.25, f"disk is {disk['used_pct']:.1f}% full", "free space before writes start to fail")
    if facts.wal_bytes > 256 * 1024 * 1024:
        d.penalize(0.15, f"WAL file is {facts.wal_bytes // (1024 * 1024)} MiB",
                   "a long-lived reader blocks checkpoints; restart the daemon")
    d.metrics = s | {"db_bytes": facts.db_bytes, "wal_bytes": facts.wal_bytes, "disk": disk}
    d.summary = f"{facts.db_bytes / 1e6:.1f} MB, schema v{s.get('schema_version')}"
    return d


# -- index -------------------------------------------------------------------------
def index_domain(facts: Facts) -> Domain:
    d = Domain("index")
    ix = facts.index
    total = ix.get("total_memories", 0)
    missing = ix.get("fts_missing", 0) or 0
    orphans = ix.get("fts_orphans", 0) or 0
    if missing or orphans:
        d.cap(0.3, f"full-text index out of sync: {missing} memories unindexed, {orphans} orphan rows",
              "rebuild it: `kenning doctor --fix` (or POST /api/diagnostics/repair)")
    hashes = ix.get("live_hashes", 0) or 0
    lacking = ix.get("embeddings_missing")
    if lacking is None and hashes:
        d.penalize(0.2, "the embedding model is unknown, vectors cannot be checked",
                   "check the embedding provider in `kenning doctor` (provider domain)")
    elif lacking:
        ratio = lacking / max(1, hashes)
        if lacking > facts.thresholds.embedding_lag_tolerance and ratio >= 0.5:
            d.cap(0.3, f"{lacking} of {hashes} live memories have no vector for {ix.get('embedding_model')}",
                  "semantic recall is blind: check the embedding provider, then let the embedding "
                  "tracker re-embed, or run `kenning doctor --fix` to embed them now")
        elif lacking > facts.thresholds.embedding_lag_tolerance:
            d.penalize(min(0.45, ratio), f"{lacking} live memories wait for a vector",
                       "the embedding tracker catches up in the background; if it does not, check the provider")
    errs = _recent_errors(facts, "retrieval")
    if errs:
        d.penalize(min(0.4, 0.05 * len(errs)), f"{len(errs)} recall stage/leg failure(s), last: {errs[0]['message']}",
                   "recall fell back to fewer legs; see /api/analytics/errors?stage=retrieval")
    d.metrics = ix | {"recent_retrieval_errors": len(errs)}
    d.summary = f"{total} memories, fts {ix.get('fts_rows')}, vectors {ix.get('embeddings')}"
    return d


# -- provider ------------------------------------------------------------------------
def provider_domain(facts: Facts) -> Domain:
    d = Domain("provider")
    emb, llm = facts.embedding, facts.llm
    if emb.get("ok") is False:
        d.cap(0.2, f"embedding provider {emb.get('model')} fails: {emb.get('error')}",
              "fix `embedding:` in config.yaml (provider/url/model) or switch back to `provider: bundled`")
    if llm.get("provider") not in (None, "offline", "none") and llm.get("available") is False:
        d.penalize(0.3, f"LLM provider {llm.get('provider')} is unreachable; the offline rules run instead",
                   "start the LLM server or fix `llm.url`/`llm.model` in config.yaml")
    if llm.get("budget_left") == 0:
        d.penalize(0.2, "the daily LLM token budget is spent", "raise `llm.daily_token_budget` or wait for tomorrow")
    errs = _recent_errors(facts, "embedding", "provider", "embedding-tracker") + [
        e for e in _recent_errors(facts, "api") if e["context"].get("kind") == "ProviderError"]
    if errs:
        d.penalize(min(0.4, 0.1 * len(errs)), f"{len(errs)} provider error(s), last: {errs[0]['message']}",
                   "see /api/analytics/errors?stage=embedding")
    d.metrics = {"embedding": emb, "llm": llm, "recent_errors": len(errs)}
    d.summary = f"embedding {emb.get('model') or '?'}, llm {llm.get('provider') or '?'}"
    return d


# -- mutation -------------------------------------------------------------------------
def mutation_domain(facts: Facts) -> Domain:
    d = Domain("mutation")
    m = facts.mutations
    if m.get("dangling_supersessions"):
        d.penalize(0.3, f"{m['dangling_supersessions']} memories are superseded by a memory that does not exist",
                   "clear superseded_by on them (edit in the Memories tab) or recover the winner")
    if m.get("memories_without_history"):
        d.penalize(0.2, f"{m['memories_without_history']} memories have no audit history",
                   "they were written outside the store API; re-save them so the audit trail is complete")
    errs = _recent_errors(facts, "mutation")
    if errs:
        d.penalize(min(0.5, 0.1 * len(errs)), f"{len(errs)} failed write(s), last: {errs[0]['message']}",
                   "see /api/analytics/errors?stage=mutation")
    d.metrics = m | {"recent_errors": len(errs)}
    d.summary = f"{sum(m.get('events_24h', {}).values())} history events in 24h"
    return d


# -- duplicate -------------------------------------------------------------------------
def duplicate_domain(facts: Facts) -> Domain:
    d = Domain("duplicate")
    dup = facts.duplicates
    rows = dup.get("duplicate_rows", 0)
    live = max(1, dup.get("live_memories", 0))
    if rows:
        d.penalize(max(0.21, min(0.8, 5 * rows / live)), f"{rows} exact duplicate memories stored",
                   "dedup by content hash failed somewhere; forget the copies in the Memories tab")
    d.metrics = {**dup}
    d.summary = f"{rows} duplicates"
    return d


# -- connector -------------------------------------------------------------------------
def connector_domain(facts: Facts) -> Domain:
    d = Domain("connector")
    s = facts.sessions
    if facts.connector.get("claude_code_installed") is False and not s.get("sessions"):
        d.penalize(0.3, "no harness is connected and no session has reached the daemon",
                   "run `kenning connect claude-code` (or point your harness's hooks at /api/hooks/*)")
    elif not s.get("sessions"):
        d.penalize(0.2, "no session has reached the daemon yet",
                   "start an agent session; if this persists, check the hooks with `kenning connect claude-code`")
    errs = _recent_errors(facts, "connector", "hooks", "sessions")
    if errs:
        d.penalize(min(0.5, 0.1 * len(errs)), f"{len(errs)} hook error(s), last: {errs[0]['message']}",
                   "see /api/analytics/errors?stage=connector")
    queued = facts.connector.get("spool") or {}
    if queued.get("depth"):  # hook events the daemon did not take yet (core/spool.py)
        d.penalize(0.1, f"{queued['depth']} hook event(s) waiting in the spool, oldest {queued.get('oldest_at')}",
                   "they are replayed when the daemon starts or a hook reaches it; if they stay, see the daemon log")
    if queued.get("held"):  # the daemon answered 5xx to these FAILED_TRIES times: kept aside (issue 33)
        d.penalize(0.1, f"{queued['held']} hook event(s) set aside in spool/held after repeated 5xx answers",
                   "see the daemon log for why they failed; they are kept in that folder")
    if queued.get("dropped"):
        d.penalize(0.1, f"the hook spool dropped {queued['dropped']} event(s) at its cap or age limit "
                   f"(last {queued.get('last_dropped_at')})", "keep the daemon running (kenning daemon start)")
    d.metrics = s | facts.connector | {"recent_errors": len(errs)}
    d.summary = (f"{s.get('sessions', 0)} sessions, last {s.get('last_started_at') or 'never'}; "
                 f"spool {queued.get('depth', 0)} waiting, oldest {queued.get('oldest_at') or '-'}")
    return d


# -- predictor (seed §4.1) ---------------------------------------------------------------
def predictor_domain(facts: Facts) -> Domain:
    d = Domain("predictor")
    st = dict(facts.predictor or {})
    cfg = facts.predictor_settings
    min_sessions = st.get("min_training_sessions") or cfg.get("min_training_sessions") or 30
    sessions = st.get("training_sessions", facts.scored_sessions)
    latency = facts.latency.get("predictor_score")
    timeout = st.get("score_timeout_ms") or cfg.get("score_timeout_ms") or 120
    given = st.get("sidecar")
    sidecar = given if isinstance(given, dict) else {}
    metrics = {
        "mode": st.get("mode"),
        "sidecar_alive": sidecar.get("running", sidecar.get("alive", st.get("sidecar_alive"))),
        "sidecar_pid": sidecar.get("pid", st.get("sidecar_pid")),
        "crash_count": sidecar.get("crashes_last_hour", st.get("crash_count", 0)),
        "crash_disabled": bool(sidecar.get("disabled") or st.get("crash_disabled")),
        "model_version": st.get("model_version", 0),
        "training_sessions": sessions,
        "min_training_sessions": min_sessions,
        "success_rate": st.get("success_rate"),
        "alpha": st.get("alpha", 1.0),
        "last_trained_at": st.get("last_trained_at"),
        "drift_resets": st.get("drift_resets", 0),
        "scorer_drift_signal": st.get("scorer_drift_signal", st.get("drift_signal")),
        "p95_score_latency_ms": latency["p95"] if latency else None,
        "avg_score_latency_ms": latency["mean"] if latency else None,
        "comparisons": facts.predictor_tables.get("comparisons", 0),
        "trainings": facts.predictor_tables.get("trainings", 0),
    }
    d.metrics = metrics | {k: v for k, v in st.items() if k not in metrics}
    enabled = st.get("enabled", cfg.get("enabled", True)) is not False
    # The same rule as GET /api/predictor/status's health (predictor.status.sidecar_verdict).
    verdict = sidecar_verdict(enabled, {"waiting": sidecar.get("waiting"), "disabled": metrics["crash_disabled"],
                                        "running": metrics["sidecar_alive"]})
    if verdict is not None and verdict[0] == "disabled":
        d.score, d.status, d.summary = 0.0, "disabled", verdict[1]
        return d
    if facts.predictor is None:
        d.score, d.status = 0.6, "cold_start"
        d.summary = f"collecting training data: {sessions}/{min_sessions} sessions"
        return d
    if verdict is not None and verdict[0] == "unhealthy":
        # Enabled in config but not running: a failure, red (unhealthy) and counted in the composite.
        d.cap(0.0, f"predictor sidecar down ({verdict[1]}); baseline fallback",
              "see /api/analytics/errors?stage=predictor; restart the daemon to reset the crash counter")
        d.summary = verdict[1]
        return d
    mode = st.get("mode") or st.get("status")
    cold = mode in ("cold_start", "collecting", "warming") or (mode is None and sessions < min_sessions)
    sr = metrics["success_rate"]
    if mode == "retraining":
        d.score, d.summary = 0.6, "drift detected: retraining, baseline fallback meanwhile"
    elif cold:
        d.score, d.status = 0.6, "cold_start"
        d.summary = (f"collecting training data: {min(sessions, min_sessions)}/{min_sessions} sessions"
                     if mode != "warming" else f"warming: model v{metrics['model_version']} trained, "
                     f"success_rate {sr if sr is None else round(sr, 2)}, baseline only")
    elif sr is not None and sr > 0.4:
        d.score = 0.8 + 0.2 * min(1.0, (sr - 0.4) / 0.4)
        d.summary = f"active: success_rate {sr:.2f}, α {metrics['alpha']:.2f}"
    else:
        d.score = 0.6
        d.summary = f"trained but not earning influence (success_rate {sr})"
    p95 = latency["p95"] if latency else None
    if p95 is not None and p95 > timeout:
        d.penalize(0.2, f"p95 scoring latency {p95:.0f} ms exceeds the {timeout} ms timeout",
                   "the sidecar is too slow; scores fall back to baseline. Check CPU load or raise "
                   "`predictor.score_timeout_ms`")
    elif p95 is not None and p95 > 0.8 * timeout:
        d.problems.append(Problem("warning", f"p95 scoring latency {p95:.0f} ms approaches the {timeout} ms timeout",
                                  "watch the latency sparkline in the Predictor tab"))
    drift, drift_max = metrics["scorer_drift_signal"], cfg.get("drift_threshold", 0.2)
    if drift is not None and abs(drift) > drift_max:
        d.penalize(0.1, f"judge calibration drift {drift:.2f} above {drift_max}",
                   "inspect judge reasoning in the comparison inspector; the judge may favour recent memories")
    errs = _recent_errors(facts, "predictor")
    if errs:
        d.penalize(min(0.3, 0.05 * len(errs)), f"{len(errs)} predictor error(s), last: {errs[0]['message']}",
                   "see /api/analytics/errors?stage=predictor")
    if d.status == "cold_start" and d.score < 0.6:
        d.status = None  # problems beyond cold start show as degraded/unhealthy
    return d


DOMAINS = {
    "queue": queue_domain,
    "storage": storage_domain,
    "index": index_domain,
    "provider": provider_domain,
    "mutation": mutation_domain,
    "duplicate": duplicate_domain,
    "connector": connector_domain,
    "predictor": predictor_domain,
}
