"""Hook latency: session-start and user-prompt-submit p50/p95/p99 at growing store sizes, JSON out.

    .venv/bin/python bench/hooks.py --out /tmp/hooks.json                 # 1k, 4k, 10k
    .venv/bin/python bench/hooks.py --sizes 1000 --runs 30 --proc-runs 10  # quick look

A real daemon (`python -m kenning serve`, default config: 250 ms latency budget) on a temp
home grows through the sizes with synthetic memories (bench/latency.py's generator, varied
importance, created over the last 90 days) posted to /api/memory/batch. At each size:
- **http**: POST /api/hooks/session-start for fresh session keys with varied context, then
  POST /api/hooks/user-prompt-submit on those sessions with unseen questions; timed end to
  end from this client (connection reused, like a hook client would);
- **process**: the hook command `kenning connect claude-code` installs (`<python> -P …/kenning/cli/entry.py
  hook session-start|user-prompt-submit`, hooks.install.hook_argv) fed Claude Code's documented stdin
  payload, timed from spawn to exit (process start included);
- baselines in the same run: GET /api/health (the HTTP floor), POST /api/memory/recall with
  the same prompt (what the prompt hook builds on) and `python -c pass` (the process floor).
Extraction workers are off unless --with-pipeline (a 10k bulk import's backlog would otherwise
compete with the hooks for CPU). Also reported: candidate pool sizes, degraded answers and which optional stages were cut.
Targets (issue 4): session-start p95 <= 100 ms at 4k over HTTP; goal <= 40 ms.
Reported per size as `gap_ms` (issue 16): process p95 - (Python-start p95 + HTTP p95) for each
hook, i.e. what the hook process costs beyond starting Python and the daemon's answer; target
(issue 36) <= 10 ms (`gap_p50_ms`: the same at the medians, steadier when other work shares the cores).
`cpu_over_floor_ms` (issue 36): the hook process's median CPU time (user + system, from
getrusage) minus `python -c pass`'s: what the hook's own work costs, a figure that a loaded machine
barely moves (the wait for the daemon's answer is not CPU). `process.console` is the same hook run
through pip's console script (`<venv>/bin/kenning hook …`, what installs before issue 36's change run;
it imports `re` before kenning), `baseline_import_re` what that `import re` costs by itself.
Where the session-start gap lies (issue 36): `process.post_only` is a fresh Python process that sends
the hook's own request (hooks.transport.post, no stdin, no adapter) — the hook's logic is what `this`
costs beyond it; `http.session_start_hook_body` is the hook's request (Claude Code's harness, a real
cwd with .git, a transcript path) from this client — the request's content is what it costs beyond
`http.session_start`.

Hook processes run with bytecode cached (PYTHONPYCACHEPREFIX in the bench's temp home, warmed first),
as an installed package runs: an environment with PYTHONDONTWRITEBYTECODE would otherwise compile
every kenning module on every hook.

    # issue 36, before and after in the same rounds (the before tree's hooks talk to the same daemon):
    .venv/bin/python bench/hooks.py --sizes 4000 --runs 100 --proc-runs 40 --before /tmp/before-s31/src \
        --out bench/out/hooks.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
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

from kenning.hooks.install import hook_argv

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from latency import queries, synthetic  # noqa: E402
from bench.harnesses.daemon import DaemonProcess, start_daemon  # noqa: E402  (the one daemon starter)

KENNING = str(Path(sys.executable).with_name("kenning"))  # pip's console script (older installs; --before's tree)
INSTALLED = hook_argv()  # the hook command `kenning connect` writes now
POST_ONLY = [sys.executable, "-P", "-c",  # a fresh process that sends the hook's request and nothing else
             "import sys; from kenning.hooks.jsonc import loads; from kenning.hooks.transport import daemon_endpoint, post; "
             "url, token, timeout = daemon_endpoint(); post(url, sys.argv[1], loads(sys.argv[2]), token=token, timeout=timeout)"]
PROJECT = "bench-repo"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 2)


def summary(values: list[float]) -> dict:
    return {"n": len(values), "p50": pct(values, 0.5), "p95": pct(values, 0.95), "p99": pct(values, 0.99),
            "mean": round(statistics.fmean(values), 2), "max": round(max(values), 2)}


def bench_daemon(home: Path, pipeline: bool) -> DaemonProcess:
    """This tree's daemon (the --before tree's hooks talk to it too); extraction workers off unless `pipeline`."""
    return start_daemon(home, None if pipeline else "pipeline:\n  enabled: false\n", log_name="daemon.log",
                        timeout_s=180)


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


def hook_body(key: str, workdir: Path) -> dict:
    """The session-start request the Claude Code hook sends for a session in `workdir` (its adapter's body)."""
    return {"session_key": key, "harness": "claude-code", "project": PROJECT, "cwd": str(workdir), "source": "startup",
            "transcript_path": str(workdir / f"{key}.jsonl")}


def measure_http(http: httpx.Client, size: int, runs: int, prompts: list[str], workdir: Path) -> dict:
    starts, prompts_ms, recall_ms, health_ms, cands, hook_starts = [], [], [], [], [], []
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
        ms, _ = timed_post(http, "/api/hooks/session-start", hook_body(f"{key}-h", workdir))
        hook_starts.append(ms)
    return {
        "session_start": summary(starts), "user_prompt_submit": summary(prompts_ms),
        "session_start_hook_body": summary(hook_starts),  # the hook's own request (real cwd, its harness), same client
        "baseline_recall": summary(recall_ms), "baseline_health": summary(health_ms),
        "candidates": {"min": min(cands), "max": max(cands), "mean": round(statistics.fmean(cands), 1)},
        "degraded": dict(degraded), "cut": dict(cut),
    }


def run_proc(argv: list[str], stdin: bytes, env: dict) -> tuple[float, float, bytes]:
    """(wall ms, CPU ms of the child: user + system, from getrusage, stdout) of one process run."""
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    result = subprocess.run(argv, input=stdin, capture_output=True, env=env, timeout=60)
    wall = (time.perf_counter() - began) * 1000
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime + cpu_after.ru_stime - cpu_before.ru_stime) * 1000
    return wall, cpu, result.stdout


def hook_env(env: dict, home: Path, tree: str, src: Path | None) -> dict:
    """The hook processes' environment: bytecode cached per tree (as an installed package has it);
    `src`: another tree's kenning (PYTHONPATH wins over the venv's editable install)."""
    out = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = str(home / f"pycache-{tree}")
    if src is not None:
        out["PYTHONPATH"] = str(src)
    return out


def measure_process(size: int, runs: int, prompts: list[str], envs: dict[str, dict], workdir: Path) -> dict:
    """Each tree's two hooks, then the floors, interleaved round by round (each sees the same load)."""
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    empty: Counter = Counter()
    floors = {"python_start": [sys.executable, "-c", "pass"], "import_re": [sys.executable, "-c", "import re"]}
    for i in range(-3, runs):  # three warm-up rounds: bytecode written, caches warm
        for tree, env in envs.items():  # each tree its own session: a prompt's answer must not depend on who went first
            sid = str(uuid.uuid4())
            common = {"session_id": sid, "transcript_path": str(workdir / f"{sid}.jsonl"), "cwd": str(workdir),
                      "permission_mode": "default"}
            payloads = {"session_start": ("session-start", {**common, "hook_event_name": "SessionStart",
                                                            "source": "startup"}),
                        "user_prompt_submit": ("user-prompt-submit", {**common, "hook_event_name": "UserPromptSubmit",
                                                                      "prompt": prompts[i % len(prompts)]})}
            for hook, (event, payload) in payloads.items():
                command = INSTALLED if tree == "this" else [KENNING]
                if tree == "post_only":
                    path, body = (("/api/hooks/session-start", hook_body(sid, workdir)) if hook == "session_start" else
                                  ("/api/hooks/user-prompt-submit", {"session_key": sid, "prompt": payload["prompt"]}))
                    argv = [*POST_ONLY, path, json.dumps(body)]
                else:
                    argv = [*command, "hook", event]
                ms, cpu_ms, out = run_proc(argv, json.dumps(payload).encode(), env)
                if i >= 0:
                    wall.setdefault(f"{tree}:{hook}", []).append(ms)
                    cpu.setdefault(f"{tree}:{hook}", []).append(cpu_ms)
                    empty[f"{tree}:{event}"] += tree != "post_only" and not out.strip()
        for name, argv in floors.items():
            ms, cpu_ms, _ = run_proc(argv, b"", envs["this"])
            if i >= 0:
                wall.setdefault(name, []).append(ms)
                cpu.setdefault(name, []).append(cpu_ms)
    floor_cpu = statistics.median(cpu["python_start"])
    out: dict = {}
    for tree in envs:
        entry = {hook: summary(wall[f"{tree}:{hook}"]) for hook in ("session_start", "user_prompt_submit")}
        entry["baseline_python_start"] = summary(wall["python_start"])
        entry["cpu_median_ms"] = {hook: round(statistics.median(cpu[f"{tree}:{hook}"]), 2)
                                  for hook in ("session_start", "user_prompt_submit")}
        entry["cpu_over_floor_ms"] = {hook: round(ms - floor_cpu, 2) for hook, ms in entry["cpu_median_ms"].items()}
        entry["empty_outputs"] = {k.split(":", 1)[1]: v for k, v in empty.items() if k.startswith(tree + ":")}
        out[tree] = entry
    this = out.pop("this")
    this["console"] = out.pop("console")  # the same hook through pip's console script (its `import re`)
    this["post_only"] = out.pop("post_only")  # a fresh process sending only the hook's request: the hook logic's share
    this["baseline_import_re"] = summary(wall["import_re"])
    this["cpu_floor_ms"] = {"python_start": round(floor_cpu, 2),
                            "import_re": round(statistics.median(cpu["import_re"]), 2)}
    if "before" in out:
        this["before"] = out["before"]
    return this


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
    parser.add_argument("--before", type=Path, help="another tree's src/ (e.g. /tmp/before-s31/src): its hook "
                        "processes run in the same rounds against the same daemon")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    prompts = queries(max(args.runs, 50), args.seed + 1)
    home = Path(tempfile.mkdtemp(prefix="kenning-bench-hooks-"))
    workdir = home / PROJECT
    (workdir / ".git").mkdir(parents=True)
    daemon = bench_daemon(home, args.with_pipeline)
    env = daemon.env
    results = {"bench": "hooks", "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                             "platform": platform.platform()},
               "budget_ms": 250, "pipeline_workers": args.with_pipeline, "before": str(args.before or ""),
               "load_average_start": os.getloadavg(), "sizes": {}}
    try:
        with daemon.client(timeout=60) as http:
            have = 0
            for size in sizes:
                rate = grow(http, have, size, args.seed)
                have = size
                for i in range(5):  # warm-up: model, caches, connections
                    timed_post(http, "/api/hooks/session-start", {"session_key": f"warm-{size}-{i}", "project": PROJECT})
                envs = {"this": hook_env(env, home, "this", None), "console": hook_env(env, home, "this", None),
                        "post_only": hook_env(env, home, "this", None),
                        **({"before": hook_env(env, home, "before", args.before)} if args.before else {})}
                entry = {"ingest_per_s": rate, "http": measure_http(http, size, args.runs, prompts, workdir),
                         "process": measure_process(size, args.proc_runs, prompts, envs, workdir)}
                entry["gap_ms"] = process_gap(entry["http"], entry["process"])
                entry["gap_p50_ms"] = process_gap(entry["http"], entry["process"], "p50")  # steadier on a busy machine
                entry["console_gap_ms"] = process_gap(entry["http"], entry["process"]["console"])
                entry["console_gap_p50_ms"] = process_gap(entry["http"], entry["process"]["console"], "p50")
                entry["post_only_gap_ms"] = process_gap(entry["http"], entry["process"]["post_only"])
                entry["post_only_gap_p50_ms"] = process_gap(entry["http"], entry["process"]["post_only"], "p50")
                if args.before:
                    entry["before_gap_ms"] = process_gap(entry["http"], entry["process"]["before"])
                    entry["before_gap_p50_ms"] = process_gap(entry["http"], entry["process"]["before"], "p50")
                entry["load_average"] = os.getloadavg()
                results["sizes"][str(size)] = entry
                print(json.dumps({str(size): entry}), file=sys.stderr)
    finally:
        daemon.stop()
    text = json.dumps(results, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
