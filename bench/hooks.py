"""Hook latency: session-start and user-prompt-submit p50/p95/p99 at growing store sizes, JSON out.

    .venv/bin/python bench/hooks.py --out /tmp/hooks.json                 # 1k, 4k, 10k
    .venv/bin/python bench/hooks.py --sizes 1000 --runs 30 --proc-runs 10  # quick look

A real daemon (`python -m kenning serve`, default config: 250 ms latency budget) on a temp
home grows through the sizes with synthetic memories (bench/latency.py's generator, varied
importance, created over the last 90 days) posted to /api/memory/batch. At each size:
- **http**: POST /api/hooks/session-start for fresh session keys with varied context, then
  POST /api/hooks/user-prompt-submit on those sessions with unseen questions; timed end to
  end from this client (connection reused, like a hook client would);
- **process**: `kenning hook session-start|user-prompt-submit` fed Claude Code's documented
  stdin payload, timed from spawn to exit (process start included);
- baselines in the same run: GET /api/health (the HTTP floor), POST /api/memory/recall with
  the same prompt (what the prompt hook builds on) and `python -c pass` (the process floor).
Extraction workers are off unless --with-pipeline (a 10k bulk import's backlog would otherwise
compete with the hooks for CPU). Also reported: candidate pool sizes, degraded answers and which optional stages were cut.
Targets (issue 4): session-start p95 <= 100 ms at 4k over HTTP; goal <= 40 ms.
Reported per size as `gap_ms` (issue 16): process p95 - (Python-start p95 + HTTP p95) for each
hook, i.e. what the hook process costs beyond starting Python and the daemon's answer; target <= 25 ms
(`gap_p50_ms`: the same at the medians, steadier when other work shares the cores).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import queries, synthetic  # noqa: E402

KENNING = str(Path(sys.executable).with_name("kenning"))
PROJECT = "bench-repo"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 2)


def summary(values: list[float]) -> dict:
    return {"n": len(values), "p50": pct(values, 0.5), "p95": pct(values, 0.95), "p99": pct(values, 0.99),
            "mean": round(statistics.fmean(values), 2), "max": round(max(values), 2)}


def start_daemon(home: Path, pipeline: bool) -> tuple[subprocess.Popen, str, dict]:
    if not pipeline:
        (home / "config.yaml").write_text("pipeline:\n  enabled: false\n")
    port = free_port()
    env = {**os.environ, "KENNING_HOME": str(home), "KENNING_PORT": str(port)}
    log = open(home / "daemon.log", "ab")
    proc = subprocess.Popen([sys.executable, "-m", "kenning", "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/api/health", timeout=1).status_code == 200:
                return proc, url, env
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit("daemon did not start; see " + str(home / "daemon.log"))


def grow(http: httpx.Client, start: int, stop: int, seed: int) -> float:
    rng = random.Random(seed + start)
    now = datetime.now(timezone.utc)
    texts = synthetic(stop - start, seed + start)
    began = time.perf_counter()
    for i in range(0, len(texts), 500):
        chunk = [{"content": t, "project": PROJECT, "importance": round(rng.uniform(0.05, 0.95), 2),
                  "created_at": (now - timedelta(days=rng.uniform(0, 90))).isoformat()}
                 for t in texts[i:i + 500]]
        response = http.post("/api/memory/batch", json={"memories": chunk}, timeout=600)
        response.raise_for_status()
    return round((stop - start) / (time.perf_counter() - began), 1)


def timed_post(http: httpx.Client, path: str, body: dict) -> tuple[float, dict]:
    began = time.perf_counter()
    response = http.post(path, json=body)
    elapsed = (time.perf_counter() - began) * 1000
    response.raise_for_status()
    return elapsed, response.json()


def measure_http(http: httpx.Client, size: int, runs: int, prompts: list[str]) -> dict:
    starts, prompts_ms, recall_ms, health_ms, cands = [], [], [], [], []
    cut, degraded = Counter(), Counter()
    for i in range(runs):
        key = f"bench-{size}-{i}-{uuid.uuid4().hex[:6]}"
        ms, out = timed_post(http, "/api/hooks/session-start", {
            "session_key": key, "harness": "bench", "project": PROJECT, "cwd": f"/src/{PROJECT}",
            "context": f"branch: feature/{prompts[i % len(prompts)][:40]}"})
        starts.append(ms)
        cands.append(out.get("candidates", 0))
        cut.update(f"session-start:{c}" for c in out.get("cut", []))
        degraded["session-start"] += bool(out.get("degraded"))
        ms, out = timed_post(http, "/api/hooks/user-prompt-submit", {"session_key": key, "prompt": prompts[i % len(prompts)]})
        prompts_ms.append(ms)
        cut.update(f"user-prompt-submit:{c}" for c in out.get("cut", []))
        degraded["user-prompt-submit"] += bool(out.get("degraded"))
        ms, _ = timed_post(http, "/api/memory/recall", {"query": prompts[(i + 7) % len(prompts)], "limit": 15,
                                                        "project": PROJECT})
        recall_ms.append(ms)
        began = time.perf_counter()
        http.get("/api/health").raise_for_status()
        health_ms.append((time.perf_counter() - began) * 1000)
    return {
        "session_start": summary(starts), "user_prompt_submit": summary(prompts_ms),
        "baseline_recall": summary(recall_ms), "baseline_health": summary(health_ms),
        "candidates": {"min": min(cands), "max": max(cands), "mean": round(statistics.fmean(cands), 1)},
        "degraded": dict(degraded), "cut": dict(cut),
    }


def run_proc(argv: list[str], stdin: bytes, env: dict) -> tuple[float, bytes]:
    began = time.perf_counter()
    result = subprocess.run(argv, input=stdin, capture_output=True, env=env, timeout=60)
    return (time.perf_counter() - began) * 1000, result.stdout


def measure_process(size: int, runs: int, prompts: list[str], env: dict, workdir: Path) -> dict:
    starts, prompts_ms, floor, empty = [], [], [], Counter()
    for i in range(runs):
        sid = str(uuid.uuid4())
        common = {"session_id": sid, "transcript_path": str(workdir / f"{sid}.jsonl"), "cwd": str(workdir),
                  "permission_mode": "default"}
        ms, out = run_proc([KENNING, "hook", "session-start"], json.dumps(
            {**common, "hook_event_name": "SessionStart", "source": "startup"}).encode(), env)
        starts.append(ms)
        empty["session-start"] += not out.strip()
        ms, out = run_proc([KENNING, "hook", "user-prompt-submit"], json.dumps(
            {**common, "hook_event_name": "UserPromptSubmit", "prompt": prompts[i % len(prompts)]}).encode(), env)
        prompts_ms.append(ms)
        empty["user-prompt-submit"] += not out.strip()
        ms, _ = run_proc([sys.executable, "-c", "pass"], b"", env)
        floor.append(ms)
    return {"session_start": summary(starts), "user_prompt_submit": summary(prompts_ms),
            "baseline_python_start": summary(floor), "empty_outputs": dict(empty)}


def process_gap(http: dict, process: dict, q: str = "p95") -> dict:
    """What the hook process adds beyond its floor: process pXX - (Python-start pXX + HTTP pXX), per hook."""
    floor = process["baseline_python_start"][q]
    return {hook: round(process[hook][q] - (floor + http[hook][q]), 2)
            for hook in ("session_start", "user_prompt_submit")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,4000,10000")
    parser.add_argument("--runs", type=int, default=100, help="HTTP samples per hook and size")
    parser.add_argument("--proc-runs", type=int, default=30, help="`kenning hook` process samples per hook and size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--with-pipeline", action="store_true",
                        help="keep extraction workers on (their bulk-import backlog then competes for CPU)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    prompts = queries(max(args.runs, 50), args.seed + 1)
    home = Path(tempfile.mkdtemp(prefix="kenning-bench-hooks-"))
    workdir = home / PROJECT
    (workdir / ".git").mkdir(parents=True)
    proc, url, env = start_daemon(home, args.with_pipeline)
    results = {"bench": "hooks", "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                             "platform": platform.platform()},
               "budget_ms": 250, "pipeline_workers": args.with_pipeline, "sizes": {}}
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            have = 0
            for size in sizes:
                rate = grow(http, have, size, args.seed)
                have = size
                for i in range(5):  # warm-up: model, caches, connections
                    timed_post(http, "/api/hooks/session-start", {"session_key": f"warm-{size}-{i}", "project": PROJECT})
                entry = {"ingest_per_s": rate, "http": measure_http(http, size, args.runs, prompts),
                         "process": measure_process(size, args.proc_runs, prompts, env, workdir)}
                entry["gap_ms"] = process_gap(entry["http"], entry["process"])
                entry["gap_p50_ms"] = process_gap(entry["http"], entry["process"], "p50")  # steadier on a busy machine
                results["sizes"][str(size)] = entry
                print(json.dumps({str(size): entry}), file=sys.stderr)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = json.dumps(results, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
