"""The diagnostics report: gather facts once, score every domain, roll up a composite.

`Probes` carries what only the running service knows (is the embedding provider answering,
what does the predictor sidecar say); every probe is optional and a failing probe becomes a
problem in its domain rather than an exception, because the report must describe a broken
system, not crash on it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
import time
import weakref
from dataclasses import dataclass
from datetime import timedelta
from typing import Callable, Protocol, TypedDict, TypeVar

from kenning.core import spool, transcript_file
from kenning.core import telemetry
from kenning.core.clock import now_iso, to_iso, utcnow
from kenning.core.config import Settings
from kenning.predictor.constants import MIN_SCORER_CONFIDENCE
from kenning.core.errors import NotFound
from kenning.diagnostics import analytics
from kenning.diagnostics.health import DOMAINS, DomainReport, Facts, status_for
from kenning.store import diagnostics as sql
from kenning.store import predictor as pstore
from kenning.store import review as review_sql
from kenning.store.backend import StoreDatabase

# Domains whose cold-start/disabled status is expected and does not pull the composite down.
_INFORMATIONAL = {"cold_start", "disabled"}


@dataclass
class Probes:
    """Live checks supplied by the service; each returns plain data and may raise."""

    embedding_model: str | None = None
    embedding_check: Callable[[], None] | None = None  # raises when the provider is broken
    llm_provider: str | None = None
    llm_available: Callable[[], bool] | None = None
    llm_budget_left: Callable[[], int | None] | None = None
    predictor_status: Callable[[], dict[str, object]] | None = None
    claude_code_installed: Callable[[], bool | None] | None = None
    workers: Callable[[], dict[str, object]] | None = None


T = TypeVar("T")


def _call(probe: Callable[[], T] | None, default: T | None = None) -> tuple[T | None, str | None]:
    if probe is None:
        return default, None
    try:
        return probe(), None
    except Exception as exc:  # a probe is a process boundary: report, never raise
        return default, f"{type(exc).__name__}: {exc}"


def _file_size(path: str | os.PathLike[str]) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class DiskUsage(TypedDict, total=False):
    """The home disk's size, free bytes and use (empty when it cannot be read)."""

    total: int
    free: int
    used_pct: float


def disk_usage(path: str | os.PathLike[str]) -> DiskUsage:
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return {}
    used_pct = 100.0 * (usage.total - usage.free) / usage.total if usage.total else 0.0
    return {"total": usage.total, "free": usage.free, "used_pct": round(used_pct, 2)}


def gather_facts(db: StoreDatabase, settings: Settings, probes: Probes | None = None) -> Facts:
    probes = probes or Probes()
    now = now_iso()
    day_ago = to_iso(utcnow() - timedelta(days=1))
    obs = settings.observability
    with db.snapshot() as conn:
        storage = sql.storage_stats(conn)
        index = sql.index_stats(conn, probes.embedding_model)
        duplicates = sql.duplicate_stats(conn)
        mutations = sql.mutation_stats(conn, day_ago)
        lease_ms = settings.pipeline.worker.lease_timeout_ms
        queue = sql.queue_stats(conn, now, to_iso(utcnow() - timedelta(milliseconds=lease_ms)))
        outcomes = sql.recent_job_outcomes(conn, obs.silent_failure_jobs)
        sessions = sql.session_stats(conn)
        predictor_tables = sql.predictor_table_stats(conn)
        gate = MIN_SCORER_CONFIDENCE  # (PredictorSettings has no such setting: the getattr always read 0.6)
        scored = sql.scored_session_count(conn, gate)

    embedding: dict[str, object] = {"model": probes.embedding_model}
    if probes.embedding_check is not None:
        _, err = _call(probes.embedding_check)
        embedding.update(ok=err is None, error=err)
    llm: dict[str, object] = {"provider": probes.llm_provider}
    if probes.llm_available is not None:
        available, err = _call(probes.llm_available, False)
        llm.update(available=bool(available), error=err)
    if probes.llm_budget_left is not None:
        llm["budget_left"], _ = _call(probes.llm_budget_left)

    predictor, perr = _call(probes.predictor_status)
    if perr:
        predictor = {"sidecar_alive": False, "error": perr}
    installed, _ = _call(probes.claude_code_installed)
    workers, _ = _call(probes.workers)
    return Facts(
        now=now,
        thresholds=obs,
        storage=storage,
        index=index,
        duplicates=duplicates,
        mutations=mutations,
        queue=queue,
        job_outcomes=outcomes,
        sessions=sessions,
        errors=telemetry.recent_errors(),
        logs=telemetry.recent_logs(limit=500),
        latency=analytics.latency_report(recent=0),
        db_bytes=_file_size(db.path),
        wal_bytes=_file_size(f"{db.path}-wal"),
        embedding=embedding,
        llm=llm,
        predictor=predictor,
        predictor_tables=predictor_tables,
        predictor_settings=settings.predictor.model_dump(),
        scored_sessions=scored,
        connector={"claude_code_installed": installed, "spool": spool.stats(str(settings.home)),
                   "transcript_refusals": dict(transcript_file.REFUSALS)},
        workers=workers,
        disk={**disk_usage(db.path.parent if isinstance(db.path, Path) else settings.home)},  # PostgreSQL: a URL
    )


def domain_report(facts: Facts, name: str) -> DomainReport:
    fn = DOMAINS.get(name)
    if fn is None:
        raise NotFound(f"unknown diagnostics domain {name!r}; one of: {', '.join(DOMAINS)}")
    return fn(facts).as_dict()


class Composite(TypedDict):
    score: float
    status: str


def composite(domains: dict[str, DomainReport]) -> Composite:
    """Mean of the counted domains, capped so that one red domain makes the whole report red."""
    counted = [d for d in domains.values() if d["status"] not in _INFORMATIONAL]
    if not counted:
        return {"score": 1.0, "status": "healthy"}
    score = sum(d["score"] for d in counted) / len(counted)
    statuses = {d["status"] for d in counted}
    if "unhealthy" in statuses:
        score = min(score, 0.49)
    elif "degraded" in statuses:
        score = min(score, 0.79)
    score = round(score, 3)
    return {"score": score, "status": status_for(score)}


def offline_probes(db: StoreDatabase, settings: Settings) -> Probes:
    """The probes a report can take without a daemon: the stored embedding model and the LLM named."""
    return Probes(embedding_model=pstore.embedding_model_in_use(db.reader()), llm_provider=settings.llm.provider)


def build_report(db: StoreDatabase, settings: Settings, probes: Probes | None = None) -> dict[str, object]:
    facts = gather_facts(db, settings, probes)
    domains = {name: fn(facts).as_dict() for name, fn in DOMAINS.items()}
    problems = [
        p | {"domain": name} for name, d in domains.items() for p in d["problems"]
    ]
    problems.sort(key=lambda p: (p["severity"] != "error", p["domain"]))
    return {
        "generated_at": facts.now,
        "composite": composite(domains),
        "domains": domains,
        "problems": problems,
        # what review decided per extraction rule (learned / pending / accepted / rejected): a noisy rule shows itself
        "review_rules": review_sql.rule_counts(db.reader()),
    }


def _throttled(check: Callable[[], object], ttl_s: float = 30.0) -> Callable[[], None]:
    """Run a costly probe at most every `ttl_s` seconds; replay its last failure meanwhile."""
    at = -ttl_s
    error: Exception | None = None

    def run() -> None:
        nonlocal at, error
        if time.monotonic() - at >= ttl_s:
            at = time.monotonic()
            try:
                check()
                error = None
            except Exception as exc:  # re-raised below as the probe's own failure
                error = exc
        if error is not None:
            raise error

    return run


class _Embedder(Protocol):
    @property
    def model_id(self) -> str: ...
    def embed(self, text: str, /) -> object: ...


class _Llm(Protocol):
    def available(self) -> bool: ...


class _Predictor(Protocol):
    def status(self) -> dict[str, object]: ...


class ProbedService(Protocol):
    """What the probes need of a running service (this layer cannot import kenning.service): its
    settings, embedder, pipeline LLM and predictor (kenning.service.Kenning has them all)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def embedder(self) -> _Embedder: ...
    @property
    def llm(self) -> _Llm: ...
    @property
    def predictor(self) -> _Predictor: ...


_PROBES: "weakref.WeakKeyDictionary[ProbedService, Probes]" = weakref.WeakKeyDictionary()


def probes_from(service: ProbedService) -> Probes:
    """Probes for a running service, built once per service (so throttling holds)."""
    probes = _PROBES.get(service)
    if probes is None:
        probes = _PROBES[service] = _build_probes(service)
    return probes


def _build_probes(service: ProbedService) -> Probes:
    """Build probes from a running service (its embedder, pipeline LLM and predictor)."""
    settings = service.settings
    probes = Probes(llm_provider=settings.llm.provider)
    emb = service.embedder
    probes.embedding_model = emb.model_id or None
    probes.embedding_check = _throttled(lambda: emb.embed("kenning health probe"))
    probes.llm_available = service.llm.available
    probes.predictor_status = service.predictor.status
    return probes
