"""Recall while an import's background work runs (issue 36), for `bench/latency.py --background N`.

A real daemon (`kenning serve`, default config: pipeline on, offline extraction) on a temp home;
N synthetic memories imported through POST /api/memory/batch (500 a request, as `kenning import`
sends them), which queues an extract job per memory. From the import's end until no extract job is
pending or leased ("drained", at most --background-timeout seconds), an agent-paced probe recalls
over HTTP, one query every --probe-interval-ms (an agent's hooks and recalls come between model
turns, not back to back); then the same queries at the same pace once the queue is empty (idle).
(When the queue is not empty by then, the extraction worker is stopped for the idle figure.)
Reported: recall p50/p95 busy and idle and their ratio, the drain time, the extraction worker's
throughput and what it skipped (its stats from /api/pipeline/status), and the load average.
Also the daemon's CPU seconds (all its threads, from /proc) during the import, while draining and
while idle, and per job done: on a shared machine the figures that load does not move much.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.harnesses (PYTHONPATH may name another src)
from bench.harnesses.daemon import start_daemon  # noqa: E402


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 2)


def _summary(values: list[float]) -> dict:
    return {"n": len(values), "p50": _pct(values, 0.5), "p95": _pct(values, 0.95), "max": _pct(values, 1.0)}


def _cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system, every thread) the process has used; None off Linux."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _extract_left(http: httpx.Client) -> tuple[int, dict]:
    status = http.get("/api/pipeline/status").json()
    depth = status["queue"]["by_type"].get("extract", {})
    return int(depth.get("pending", 0)) + int(depth.get("leased", 0)), status["workers"].get("extraction", {})


def _probe(http: httpx.Client, qs: list[str], interval_s: float, until) -> list[float]:
    """Recall one query every `interval_s` while `until()` is False; the latencies (ms)."""
    latencies = []
    i = 0
    while not until():
        began = time.perf_counter()
        http.post("/api/memory/recall", json={"query": qs[i % len(qs)], "limit": 10}).raise_for_status()
        latencies.append((time.perf_counter() - began) * 1000)
        i += 1
        time.sleep(max(0.0, interval_s - (time.perf_counter() - began)))
    return latencies


def measure(n: int, texts: list[str], qs: list[str], *, interval_ms: int = 1000, timeout_s: float = 900,
            idle_probes: int = 120) -> dict:
    home = Path(tempfile.mkdtemp(prefix="kenning-background-"))
    daemon = start_daemon(home, log_name="daemon.log", timeout_s=300)
    proc = daemon.proc
    interval_s = interval_ms / 1000
    try:
        with daemon.client(timeout=120) as http:
            cpu = {"start": _cpu_s(proc.pid)}
            began = time.perf_counter()
            for i in range(0, n, 500):
                http.post("/api/memory/batch", json={"memories": [{"content": t, "project": f"p{j % 5}"}
                                                                   for j, t in enumerate(texts[i:i + 500], start=i)]},
                          ).raise_for_status()
            import_s = time.perf_counter() - began
            cpu["imported"] = _cpu_s(proc.pid)
            queued, _ = _extract_left(http)
            drained_at: list[float] = []
            last_check = [0.0]
            began = time.perf_counter()

            def drained() -> bool:
                if time.perf_counter() - began > timeout_s:
                    return True
                if time.perf_counter() - last_check[0] >= 2.0:
                    last_check[0] = time.perf_counter()
                    if _extract_left(http)[0] == 0:
                        drained_at.append(time.perf_counter() - began)
                        return True
                return False

            busy = _probe(http, qs[0::2], interval_s, drained)  # disjoint halves: no query-cache hit counts
            left, worker = _extract_left(http)
            cpu["drained"] = _cpu_s(proc.pid)
            if left:  # not drained in time: the idle figure is taken with extraction stopped
                http.post("/api/pipeline/workers/extraction/stop").raise_for_status()
            count = [0]

            def enough() -> bool:
                count[0] += 1
                return count[0] > idle_probes

            idle = _probe(http, qs[1::2], interval_s, enough)
            cpu["idle"] = _cpu_s(proc.pid)
    finally:
        daemon.stop()
    p95_busy, p95_idle = _pct(busy, 0.95), _pct(idle, 0.95)
    return {
        "memories": n, "import_s": round(import_s, 1), "import_per_s": round(n / import_s, 1),
        "extract_jobs_queued": queued, "drained": bool(drained_at), "left_at_timeout": left,
        "background_s": round(drained_at[0], 1) if drained_at else None, "timeout_s": timeout_s,
        "probe_interval_ms": interval_ms,
        "recall_busy_ms": _summary(busy), "recall_idle_ms": _summary(idle),
        "p95_busy_over_idle": round(p95_busy / p95_idle, 2) if p95_busy and p95_idle else None,
        "p50_busy_over_idle": round(statistics.median(busy) / statistics.median(idle), 2) if busy and idle else None,
        "extraction_worker": {k: worker.get(k) for k in ("processed", "failed", "skipped", "busy_s", "yielded_s",
                                                         "rested_s", "jobs_per_busy_s")},
        "daemon_cpu_s": _cpu_phases(cpu),
        "daemon_cpu_ms_per_job": (round(1000 * (cpu["drained"] - cpu["imported"]) / worker["processed"], 2)
                                  if cpu.get("drained") is not None and cpu.get("imported") is not None
                                  and worker.get("processed") else None),
        "load_average": os.getloadavg(),
    }


def _cpu_phases(cpu: dict[str, float | None]) -> dict[str, float | None]:
    marks = ["start", "imported", "drained", "idle"]
    return {f"{a}->{b}": (round(cpu[b] - cpu[a], 2) if cpu.get(a) is not None and cpu.get(b) is not None else None)
            for a, b in zip(marks, marks[1:])}
