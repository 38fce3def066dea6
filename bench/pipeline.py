"""Extraction pipeline throughput with the offline provider on a 10k-memory store.

    .venv/bin/python bench/pipeline.py --out /tmp/pipeline.json            # 10k store, 1000 jobs per mode
    .venv/bin/python bench/pipeline.py --memories 10000 --jobs 0          # every job: half shadow, half full

Builds a fresh store of --memories synthetic developer notes (1-4 sentences each, seeded) through
the real write path (bundled embeddings, inline linker, extract jobs enqueued in the write tx),
then measures, in the same run and on the same store:

- `extraction_stage`: the extraction stage alone (prompt → offline rules → parse/validate), the
  baseline: what a job costs before candidates, decisions and writes;
- `shadow`: whole jobs through the real extraction worker (lease → extract → top-5 hybrid recall
  per fact → decision → audit rows → complete) with `pipeline.shadow_mode: true`;
- `full`: whole jobs in the default full mode (adds embedding of new facts, controlled writes,
  supersession and graph triples).
Each mode takes the next --jobs pending jobs. Prints JSON (jobs/s, ms/job p50/p95, facts/job,
outcomes) and writes it to --out.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from kenning.core.config import load_settings
from kenning.core.types import MemoryDraft
from kenning.pipeline.extraction import extract
from kenning.providers.offline import OfflineProvider
from kenning.service import Kenning
from kenning.store import jobs

SERVICES = ["billing", "checkout", "search", "auth", "ledger", "notifications", "analytics", "gateway",
            "scheduler", "inventory", "payments", "reporting"]
TECH = ["PostgreSQL", "MySQL", "Redis", "Kafka", "RabbitMQ", "Elasticsearch", "OpenSearch", "MongoDB",
        "SQLite", "DynamoDB", "S3", "Kubernetes", "Nomad", "Docker", "Terraform", "Grafana"]
LANGS = ["Python", "Go", "Rust", "TypeScript", "Kotlin", "Java"]
PEOPLE = ["Alice", "Bob", "Chen", "Dana", "Eve", "Farid", "Grace", "Hiro"]
TEMPLATES = [
    "The {s} service uses {t}.",
    "We switched the {s} queue from {t} to {t2}.",
    "The {s} API is written in {l}.",
    "{p} prefers {t} over {t2} for local development.",
    "Deploys of {s} run on {t} every {day}.",
    "The {s} service does not use {t} anymore.",
    "Run `make test-{s}` before pushing changes to {s}.",
    "{s} depends on {t} for caching session data.",
    "Timeouts in {s} were caused by {t} connection pool exhaustion.",
    "The {s} team decided to adopt {l} for new workers.",
    "Maybe the flaky {s} tests are related to {t}, not sure.",
    "{t} is the source of truth for {s} configuration.",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def synthetic_notes(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    notes = []
    for i in range(count):
        parts = []
        for _ in range(rng.choice((1, 1, 2, 2, 3, 4))):
            t, t2 = rng.sample(TECH, 2)
            parts.append(rng.choice(TEMPLATES).format(
                s=rng.choice(SERVICES), t=t, t2=t2, l=rng.choice(LANGS), p=rng.choice(PEOPLE),
                day=rng.choice(DAYS)))
        notes.append(" ".join(parts) + f" (note {i})")
    return notes


def build_store(home: Path, notes: list[str], batch: int) -> tuple[float, int]:
    service = Kenning(load_settings(environ={"KENNING_HOME": str(home)})).start(background=False)
    start = time.perf_counter()
    for i in range(0, len(notes), batch):
        service.remember_many([MemoryDraft(content=n, project="bench") for n in notes[i:i + batch]])
    elapsed = time.perf_counter() - start
    queued = jobs.queue_depths(service.db)["extract"]["pending"]
    service.close()
    return elapsed, queued


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def summary(name: str, times_ms: list[float], extra: dict) -> dict:
    total_s = sum(times_ms) / 1000.0
    return {"mode": name, "jobs": len(times_ms), "seconds": round(total_s, 3),
            "jobs_per_s": round(len(times_ms) / total_s, 2) if total_s else None,
            "ms_per_job_p50": round(statistics.median(times_ms), 3) if times_ms else None,
            "ms_per_job_p95": round(percentile(times_ms, 0.95), 3), **extra}


def bench_extraction_stage(notes: list[str], count: int) -> dict:
    provider, cfg = OfflineProvider(), load_settings(environ={"KENNING_HOME": "/nonexistent"}).pipeline.extraction
    times, facts = [], 0
    for note in notes[:count]:
        start = time.perf_counter()
        result = extract(provider, note, cfg)
        times.append((time.perf_counter() - start) * 1000.0)
        facts += len(result.facts)
    return summary("extraction_stage", times, {"facts_per_job": round(facts / max(1, len(times)), 3)})


def bench_worker(home: Path, mode: str, count: int) -> dict:
    pipeline = {"shadow_mode": mode == "shadow"}
    service = Kenning(load_settings(environ={"KENNING_HOME": str(home)}, pipeline=pipeline)).start(background=False)
    worker = service.workers.get("extraction")
    times, outcomes, facts = [], Counter(), 0
    try:
        while count <= 0 or len(times) < count:
            before = worker.counters["processed"] + worker.counters["failed"]
            start = time.perf_counter()
            worker.run_once()
            if worker.counters["processed"] + worker.counters["failed"] == before:
                break  # queue empty
            times.append((time.perf_counter() - start) * 1000.0)
        for job in jobs.list_jobs(service.db, status="completed", limit=len(times) or 1):
            outcomes.update(job.result.get("outcomes", {}))
            facts += job.result.get("facts", 0)
        failed = worker.counters["failed"]
    finally:
        service.close()
    return summary(mode, times, {"facts_per_job": round(facts / max(1, len(times)), 3),
                                 "failed": failed, "outcomes": dict(outcomes)})


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000, help="Store size (synthetic notes).")
    parser.add_argument("--jobs", type=int, default=1000, help="Jobs measured per mode; 0 = all pending.")
    parser.add_argument("--batch", type=int, default=256, help="remember_many batch size while building.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, help="Write the JSON result here too.")
    args = parser.parse_args(argv)
    notes = synthetic_notes(args.memories, args.seed)
    with tempfile.TemporaryDirectory(prefix="kenning-bench-pipeline-") as tmp:
        home = Path(tmp)
        build_s, queued = build_store(home, notes, args.batch)
        stage = bench_extraction_stage(notes, args.jobs or len(notes))
        shadow = bench_worker(home, "shadow", args.jobs or max(1, queued // 2))
        full = bench_worker(home, "full", args.jobs)  # 0 ⇒ the rest of the queue
    result = {
        "bench": "pipeline", "provider": "offline", "memories": args.memories, "jobs_per_mode": args.jobs,
        "build": {"seconds": round(build_s, 2), "memories_per_s": round(args.memories / build_s, 1),
                  "extract_jobs_queued": queued},
        "results": [stage, shadow, full],
        "baseline": "extraction_stage",
        "relative_to_baseline": {r["mode"]: round(r["jobs_per_s"] / stage["jobs_per_s"], 4)
                                 for r in (shadow, full) if r["jobs_per_s"]},
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return result


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
