"""Predictor simulation: a simulated user drives a REAL kenning daemon over HTTP (issue 5).

The daemon runs as a subprocess (`python -m kenning serve`) on a fresh tmp KENNING_HOME and
is stopped at the end. The simulator knows the ground truth; kenning only sees what a real
harness would send:

- memories: several projects × topics, each memory a sentence of its topic's vocabulary plus
  a unique code word, inserted through POST /api/memory/batch in weekly batches (created_at in
  simulated time, so recency matters);
- latent rules for what a session needs: the project; the time of day (morning / afternoon /
  evening slot topics) and the weekday (Monday = planning topic, Friday = release topic);
  recency (a topic memory is needed with probability exp(-age/21 days), floor 0.15); and
  drift: from the middle of the run the slot → topic map of half the projects rotates;
- session-start {project, cwd, context (a topic hint 60 % of the time), timestamp};
  three user-prompt-submit calls whose prompts mention some needed memories by code word
  (FTS hits), the 2nd and 3rd carrying memory_feedback for every memory shown so far
  (needed ⇒ ~0.8, not needed ⇒ ~-0.4, 5 % flipped), then session-end {wait: true}.

Per session the candidate list (baseline_rank, predictor_rank, rank, was_injected) is read
back from GET /api/predictor/audit/{session_key}; per 25-session window the report gives
NDCG@10 (binary gains over the needed memories in the pool) and precision@k of the top k
(k = how many were injected at session start) for baseline alone, predictor alone and the
fused ranking actually injected, plus α, success rate, judge confidence and training time
(GET /api/predictor/status, /training).

    .venv/bin/python bench/predictor_sim.py --sessions 60 --memories 800 --out bench/out/predictor_sim_quick.json
    .venv/bin/python bench/predictor_sim.py --out bench/out/predictor_sim.json     # 300 sessions
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx

VOCAB = {
    "auth": "token refresh oauth session cookie login jwt expiry",
    "database": "migration schema index postgres query transaction vacuum",
    "frontend": "component css layout render hydration button modal",
    "testing": "fixture pytest flaky mock coverage assertion snapshot",
    "deploy": "docker kubernetes helm rollout canary pipeline registry",
    "perf": "latency profiler cache allocation throughput benchmark flamegraph",
    "planning": "roadmap milestone estimate backlog priority sprint scope",
    "release": "changelog version tag hotfix freeze signoff announcement",
    "api": "endpoint route payload pagination versioning openapi handler",
    "logging": "trace span metric dashboard alert sampling structured",
}
GENERIC = ("note decided because prefer avoid remember workaround issue fix change keep "
           "check ensure detail reason always never behaviour config default").split()
PROJECTS = ("atlas", "borealis", "cinder", "dynamo")
SLOT_HOURS = (9, 14, 20)
START = datetime(2026, 3, 2, 0, 0, tzinfo=timezone.utc)  # a Monday


def code_word(rng: random.Random) -> str:
    return "".join(rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("aeiou") for _ in range(3)) + str(rng.randint(10, 99))


class World:
    """Projects, topics, memories and the latent rules (all deterministic given the seed)."""

    def __init__(self, n_memories: int, n_sessions: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.n_sessions = n_sessions
        self.days = max(7, math.ceil(n_sessions / 4))  # about four sessions a day
        topics = list(VOCAB)
        self.project_topics: dict[str, list[str]] = {}
        for i, p in enumerate(PROJECTS):  # every project has planning + release + 4 work topics
            work = [t for t in topics if t not in ("planning", "release")]
            work = work[i % len(work):] + work[:i % len(work)]
            self.project_topics[p] = ["planning", "release", *work[:4]]
        self.memories: list[dict] = []
        used_codes: set[str] = set()
        pre_days = 60
        for n in range(n_memories):
            p = PROJECTS[n % len(PROJECTS)]
            topic = self.rng.choice(self.project_topics[p])
            words = VOCAB[topic].split()
            code = code_word(self.rng)
            while code in used_codes:
                code = code_word(self.rng)
            used_codes.add(code)
            # 40 % exist before the run (last 60 days), 60 % appear during it
            if self.rng.random() < 0.4:
                created = START - timedelta(days=self.rng.uniform(0, pre_days))
            else:
                created = START + timedelta(days=self.rng.uniform(0, self.days))
            text = (f"{p} {topic}: {' '.join(self.rng.sample(words, 3))} "
                    f"{' '.join(self.rng.sample(GENERIC, 4))} {code}")
            self.memories.append({"n": n, "project": p, "topic": topic, "code": code, "created": created,
                                  "importance": round(self.rng.uniform(0.3, 0.9), 3), "content": text, "id": None})

    def slot_topic(self, project: str, slot: int, drifted: bool) -> str:
        work = self.project_topics[project][2:]
        shift = 1 if drifted and PROJECTS.index(project) % 2 == 0 else 0
        return work[(slot + shift) % len(work)]

    def plan(self, index: int) -> dict:
        rng = random.Random(f"plan-{self.seed}-{index}")
        day = index * self.days // self.n_sessions
        slot = rng.choice(range(len(SLOT_HOURS)))
        at = START + timedelta(days=day, hours=SLOT_HOURS[slot], minutes=rng.randint(0, 50))
        weekday = at.weekday()
        project = PROJECTS[(day + (slot == 2)) % len(PROJECTS)] if rng.random() < 0.7 else rng.choice(PROJECTS)
        drifted = index >= self.n_sessions // 2
        if weekday == 0 and slot == 0:
            topic = "planning"
        elif weekday == 4 and slot >= 1:
            topic = "release"
        else:
            topic = self.slot_topic(project, slot, drifted)
        needed = []
        for m in self.memories:
            if m["project"] != project or m["topic"] != topic or m["created"] > at:
                continue
            age = (at - m["created"]).total_seconds() / 86400
            if rng.random() < max(0.15, math.exp(-age / 21)):
                needed.append(m)
        return {"index": index, "key": f"sim-{index:04d}", "at": at, "project": project, "topic": topic,
                "slot": slot, "weekday": weekday, "drifted": drifted, "needed": needed, "rng": rng}


def iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- daemon -----------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CONFIG = """sessions:
  latency_budget_ms: {budget}
  summary_max_facts: 0
predictor:
  score_timeout_ms: {score_timeout}
"""


class Daemon:
    def __init__(self, home: Path, config: str) -> None:
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.yaml").write_text(config)
        self.home, self.port = home, free_port()
        env = {**os.environ, "KENNING_HOME": str(home), "KENNING_PORT": str(self.port)}
        self.log = open(home / "daemon.log", "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "kenning", "serve"], env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError((home / "daemon.log").read_text()[-3000:])
            try:
                if httpx.get(f"{self.url}/api/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError("daemon did not start")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


# -- metrics ----------------------------------------------------------------------------------
def ndcg10(order: list[str], needed: set[str]) -> float:
    ideal_n = min(len(needed), 10)
    if not ideal_n:
        return 0.0
    dcg = sum(1 / math.log2(i + 2) for i, m in enumerate(order[:10]) if m in needed)
    return dcg / sum(1 / math.log2(i + 2) for i in range(ideal_n))


def precision(top: list[str], needed: set[str]) -> float:
    return sum(1 for m in top if m in needed) / len(top) if top else 0.0


def session_metrics(audit: dict, needed_ids: set[str]) -> dict:
    rows = [r for r in audit["candidates"] if r.get("prefilter_source")]  # session-start candidates
    pool = {r["memory_id"] for r in rows}
    in_pool = needed_ids & pool
    base = [r["memory_id"] for r in sorted(rows, key=lambda r: r["baseline_rank"] or 10**6)]
    fused = [r["memory_id"] for r in sorted(rows, key=lambda r: r["rank"])]
    injected = [r["memory_id"] for r in sorted(rows, key=lambda r: r["rank"])
                if r["was_injected"] and r.get("inject_phase") == "session-start"]
    k = len(injected) or 1
    scored = [r for r in rows if r.get("predictor_rank") is not None]
    out = {"pool": len(rows), "needed": len(needed_ids), "needed_in_pool": len(in_pool), "k": len(injected),
           "ndcg_baseline": ndcg10(base, in_pool), "ndcg_fused": ndcg10(fused, in_pool),
           "p_baseline": precision(base[:k], needed_ids), "p_fused": precision(injected, needed_ids),
           "ndcg_predictor": None, "p_predictor": None,
           "p_oracle": min(len(in_pool), len(injected)) / k}  # best any ranking of this pool could do
    if scored:
        pred = [r["memory_id"] for r in sorted(scored, key=lambda r: r["predictor_rank"])]
        out["ndcg_predictor"] = ndcg10(pred, in_pool)
        out["p_predictor"] = precision(pred[:k], needed_ids)
    return out


# -- the simulated user -------------------------------------------------------------------------
def insert_memories(client: httpx.Client, world: World, until: datetime, done: set[int]) -> int:
    batch = [m for m in world.memories if m["n"] not in done and m["created"] <= until]
    for i in range(0, len(batch), 500):
        chunk = batch[i:i + 500]
        body = {"memories": [{"content": m["content"], "project": m["project"], "importance": m["importance"],
                              "created_at": iso(m["created"]), "tags": [m["topic"]], "source": "sim"}
                             for m in chunk]}
        r = client.post("/api/memory/batch", json=body, timeout=600)
        r.raise_for_status()
        for m, res in zip(chunk, r.json()["results"]):
            m["id"] = res["id"]
            done.add(m["n"])
    return len(batch)


def feedback_for(shown: list[str], needed_ids: set[str], rng: random.Random) -> dict[str, float]:
    out = {}
    for m in shown:
        good = (m in needed_ids) != (rng.random() < 0.05)
        out[m] = round(max(-1.0, min(1.0, (0.8 if good else -0.4) + rng.gauss(0, 0.1))), 3)
    return out


def run_session(client: httpx.Client, world: World, plan: dict) -> dict:
    rng: random.Random = plan["rng"]
    key, at, project = plan["key"], plan["at"], plan["project"]
    needed_ids = {m["id"] for m in plan["needed"] if m["id"]}
    words = VOCAB[plan["topic"]].split()
    context = f"{project}: continuing work"
    if rng.random() < 0.6:
        context += f" on the {' '.join(rng.sample(words, 2))}"
    r = client.post("/api/hooks/session-start", json={
        "session_key": key, "project": project, "cwd": f"/home/dev/{project}", "context": context,
        "timestamp": iso(at), "harness": "sim"})
    r.raise_for_status()
    start = r.json()
    shown = list(start.get("memory_ids") or [])
    mentions = rng.sample(plan["needed"], min(len(plan["needed"]), 4))
    for i in range(3):
        mentioned = mentions[i::3]
        prompt = (f"in {project}, about the {' '.join(rng.sample(words, 2))}: "
                  + " and ".join(f"what did we decide for {m['code']}" for m in mentioned)
                  + ("" if mentioned else "let's keep going"))
        body = {"session_key": key, "prompt": prompt, "timestamp": iso(at + timedelta(minutes=5 + 15 * i))}
        if i > 0 and shown:
            body["memory_feedback"] = feedback_for(shown, needed_ids, rng)
        r = client.post("/api/hooks/user-prompt-submit", json=body)
        r.raise_for_status()
        shown += [m for m in r.json().get("memory_ids") or [] if m not in shown]
    r = client.post("/api/hooks/session-end", json={"session_key": key, "timestamp": iso(at + timedelta(minutes=60)),
                                                    "wait": True}, timeout=300)
    r.raise_for_status()
    audit = client.get(f"/api/predictor/audit/{key}").json()
    metrics = session_metrics(audit, needed_ids)
    score = audit.get("session_score") or {}
    metrics.update(index=plan["index"], key=key, project=project, topic=plan["topic"], slot=plan["slot"],
                   weekday=plan["weekday"], drifted=plan["drifted"], degraded=bool(start.get("degraded")),
                   confidence=score.get("confidence"), continuity=score.get("score"),
                   alpha_used=(audit.get("context") or {}).get("alpha"),
                   predictor_scored=bool((audit.get("context") or {}).get("scored")),
                   comparison=bool(audit.get("comparison")))
    return metrics


def mean(values: list) -> float | None:
    vals = [v for v in values if v is not None]
    return round(sum(vals) / len(vals), 4) if vals else None


def windows(rows: list[dict], status_log: list[dict], size: int) -> list[dict]:
    out = []
    for start in range(0, len(rows), size):
        part = rows[start:start + size]
        st = [s for s in status_log if start <= s["index"] < start + size]
        out.append({
            "sessions": f"{start + 1}-{start + len(part)}", "n": len(part),
            **{f"{m}_{arm}": mean([r[f"{m}_{arm}"] for r in part])
               for m in ("ndcg", "p") for arm in ("baseline", "predictor", "fused")},
            "p_fused_minus_baseline": mean([r["p_fused"] - r["p_baseline"] for r in part]),
            "p_oracle": mean([r["p_oracle"] for r in part]),
            "needed_in_pool": mean([r["needed_in_pool"] for r in part]),
            "alpha_used": mean([r["alpha_used"] for r in part]),
            "alpha_end": st[-1]["alpha"] if st else None, "success_rate_end": st[-1]["success_rate"] if st else None,
            # after cold start = cold start had been left before the window's first session
            "cold_start": not (start > 0 and status_log[start - 1]["cold_start_exited"]),
            "confidence": mean([r["confidence"] for r in part]),
            "confidence_ge_0_6": sum(1 for r in part if (r["confidence"] or 0) >= 0.6),
            "predictor_scored": sum(1 for r in part if r["predictor_scored"]),
            "degraded": sum(1 for r in part if r["degraded"]),
        })
    return out


def verdict(win: list[dict], by_session: int = 150) -> dict:
    by = [w for w in win if int(w["sessions"].split("-")[1]) <= by_session] or win[:1]
    lift_at = by[-1]["p_fused_minus_baseline"] if by else None
    after_cold = [w for w in win if not w["cold_start"]]
    worst = min((w["p_fused_minus_baseline"] for w in after_cold), default=None)
    return {"lift_at_window_ending_by_%d" % by_session: lift_at,
            "target_lift_met": lift_at is not None and lift_at >= 0.10,
            "worst_window_after_cold_start": worst,
            "target_never_worse_met": worst is None or worst >= -0.02,
            "windows_after_cold_start": len(after_cold)}


def print_table(report: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"predictor_sim: {report['config']['sessions']} sessions, {report['config']['memories']} memories")
    cols = ["sessions", "ndcg_baseline", "ndcg_predictor", "ndcg_fused", "p_baseline", "p_predictor", "p_fused",
            "p_fused_minus_baseline", "p_oracle", "alpha_end", "success_rate_end", "confidence", "predictor_scored", "cold_start"]
    heads = ["sess", "NDCG base", "NDCG pred", "NDCG fused", "P base", "P pred", "P fused", "ΔP", "P max", "α", "succ",
             "conf", "scored", "cold"]
    for h in heads:
        t.add_column(h, justify="right")
    for w in report["windows"]:
        t.add_row(*["-" if w[c] is None else (f"{w[c]:.3f}" if isinstance(w[c], float) else str(w[c])) for c in cols])
    console = Console(stderr=True, width=170)
    console.print(t)
    console.print(f"training runs: {report['training']['runs']} (swapped {report['training']['swapped']}), "
                  f"duration ms mean {report['training']['duration_ms_mean']} max {report['training']['duration_ms_max']}")
    console.print(f"verdict: {report['verdict']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=300)
    ap.add_argument("--memories", type=int, default=2400)
    ap.add_argument("--window", type=int, default=25)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--latency-budget-ms", type=int, default=5000,
                    help="sessions.latency_budget_ms for the bench daemon (2-core box: the 250 ms default cuts stages)")
    ap.add_argument("--score-timeout-ms", type=int, default=2000, help="predictor.score_timeout_ms for the bench daemon")
    ap.add_argument("--home", type=Path, default=None, help="KENNING_HOME (default: a tmp dir, removed)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    world = World(args.memories, args.sessions, args.seed)
    tmp = tempfile.TemporaryDirectory(prefix="kenning-predsim-") if args.home is None else None
    home = args.home or Path(tmp.name) / "home"
    config = CONFIG.format(budget=args.latency_budget_ms, score_timeout=args.score_timeout_ms)
    t0 = time.perf_counter()
    daemon = Daemon(home, config)
    rows, status_log, done = [], [], set()
    try:
        with httpx.Client(base_url=daemon.url, timeout=120) as client:
            t_ins = time.perf_counter()
            inserted = insert_memories(client, world, START, done)
            insert_s = time.perf_counter() - t_ins
            for i in range(args.sessions):
                plan = world.plan(i)
                inserted += insert_memories(client, world, plan["at"], done)
                plan["needed"] = [m for m in plan["needed"] if m["id"]]
                rows.append(run_session(client, world, plan))
                st = client.get("/api/predictor/status").json()
                status_log.append({"index": i, "alpha": st.get("alpha"), "success_rate": st.get("success_rate"),
                                   "cold_start_exited": st.get("cold_start_exited"),
                                   "model_version": st.get("model_version")})
                if (i + 1) % 10 == 0:
                    print(f"[{time.perf_counter() - t0:6.0f}s] session {i + 1}/{args.sessions} α={st.get('alpha')} "
                          f"succ={st.get('success_rate')} conf={rows[-1]['confidence']}", file=sys.stderr, flush=True)
            client.post("/api/predictor/train", params={"wait": "true"}, timeout=300)  # waits out a running one
            training = client.get("/api/predictor/training", params={"limit": 500}).json()
            final_status = client.get("/api/predictor/status").json()
    finally:
        daemon.stop()
        if tmp is not None:
            tmp.cleanup()
    runs = [r for r in training.get("items", []) if r.get("trigger") != "manual"]
    durations = [r["duration_ms"] for r in runs if r.get("duration_ms") is not None]
    win = windows(rows, status_log, args.window)
    report = {
        "benchmark": "predictor_sim", "daemon": "real `python -m kenning serve` subprocess over HTTP",
        "config": {"sessions": args.sessions, "memories": args.memories, "inserted": inserted, "seed": args.seed,
                   "window": args.window, "projects": list(PROJECTS), "daemon_config": config,
                   "initial_insert_s": round(insert_s, 1)},
        "windows": win, "verdict": verdict(win),
        "overall": {k: mean([r[k] for r in rows]) for k in
                    ("ndcg_baseline", "ndcg_predictor", "ndcg_fused", "p_baseline", "p_predictor", "p_fused",
                     "p_oracle", "confidence")},
        "low_confidence_with_feedback": sum(1 for r in rows if (r["confidence"] or 0) < 0.6),
        "training": {"runs": len(runs), "swapped": sum(1 for r in runs if r.get("swapped")),
                     "duration_ms_mean": mean(durations), "duration_ms_max": max(durations, default=None),
                     "log": [{k: r.get(k) for k in ("model_version", "trigger", "loss", "sample_count", "duration_ms",
                                                    "swapped", "canary_ndcg", "canary_topk_overlap", "error")}
                             for r in runs]},
        "final_status": {k: final_status.get(k) for k in ("alpha", "success_rate", "model_version",
                                                          "cold_start_exited", "comparisons", "training_sessions",
                                                          "status_line", "drift_resets")},
        "wall_s": round(time.perf_counter() - t0, 1), "sessions": rows,
    }
    text = json.dumps(report, indent=2, default=str)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(json.dumps({k: v for k, v in report.items() if k != "sessions"}, default=str)[:20000])
    print_table(report)


if __name__ == "__main__":
    main()
