"""Predictor simulation on the DEFAULT configuration: a simulated user drives a real daemon (issue 11).

The daemon runs as a subprocess (`python -m kenning serve`) on a fresh tmp KENNING_HOME with
an empty config.yaml (no LLM: the heuristic continuity judge; 250 ms hook budget; 120 ms score
timeout; training every 10 sessions from 10 usable sessions) and is stopped at the end. The
simulator knows the ground truth; kenning only sees what a real harness would send.

The user's world (all deterministic given the seed):
- projects, each working through **tasks** that last several of its sessions (3-6); a task
  owns ~7 memories naming its files and functions (`src/atlas/billing/retry_queue.py`,
  `drain_batches()`), two of them written while the task runs;
- **evergreen preferences** per project, needed in every session of it, stored as the user states
  them: project rules (`applies: project`, `memory_body`), the only kind of memory that may open a
  session (issue 31); at the middle of the run they **drift**: the old ones go stale (the agent
  rates them down) and new ones appear;
- **superseded memories**: during a task some decisions are revised; the old note stays in
  the store (no LLM pipeline to supersede it by default) and the agent rates it down;
- filler: older notes of the project, any importance, rarely needed.
A session needs its task's current memories and the project's current preferences, and the
key facts kenning itself wrote at earlier session ends (default `summary_max_facts: 12`) that
restate one of those task notes (they name its file and function).

Each session (`drive_session`, the loop bench/task_sim.py shares): session-start {project, cwd,
context "<project>: continuing work", timestamp} —
nothing names the task; then 3-4 exchanges: the first prompt names the task, later prompts
ask about one of its files or functions; the agent's answer quotes what it used (its files
and functions appear in the transcript); the agent rates the memories it was shown on every
prompt (`--feedback every`), on a third of them (`third`) or never (`none`); session-end with
that transcript, {wait: true}.

After each session the simulator waits until a started sidecar is ready and no training
runs (real sessions are hours apart; here they are seconds apart). On this shared 2-core box
the default 250 ms hook budget cuts the similarity and predictor stages of most session
starts, so runs pass `--config` with `latency_budget_ms: 5000` and `score_timeout_ms: 2000`;
every learning setting stays at its default.

Per session the session-start candidates (baseline_rank, predictor_rank, rank, was_injected)
are read back from GET /api/predictor/audit/{key}. Per 25-session window: precision of the
injected set (k = how many session-start injected) and NDCG@10 over the pool for baseline,
predictor and fused (what was injected), trainings, swaps, α, success rate. A report column
only (the targets read session start): the first prompt's precision (P1) — what prompt 1 newly
injected, and the top k of its recorded pool (audit `pools`) in recall vs the fused order.
`--stop-after N` runs only the first N sessions of the same world (a quick look at the drift).

The predictor's lift (issue 32), two ways, per window and over the last half of the run:
- **by replay** (counterfactual): for every logged session both recorded orders are scored against
  the sim's labels — the session-start pool's baseline order and predictor order, and the first
  prompt's pool's recall order and predictor order (audit `pools`): recall and precision of each
  order's top REPLAY_K, and of the union of both pools' top REPLAY_K // 2 (≤ REPLAY_K memories a
  session, the issue's bound); lift = predictor − baseline (`replay_lift`).
- **by interleaving**: what each ranking's own picks brought in an interleaved session (the
  comparison's per-item credit, `method` 'interleave'): needed memories picked by the predictor's
  team minus those picked by the baseline's, over the session's needed count, and who won by the
  session's credit (`interleave_lift`); a shared pick (both rankings would have made it) counts for
  neither, `il_contested` / `il_shared` count the two kinds, `il_detail` lists every pick.

    .venv/bin/python bench/predictor_sim.py --feedback every --out bench/out/predictor_sim_every.json
    .venv/bin/python bench/predictor_sim.py --feedback none --sessions 100
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.harnesses (PYTHONPATH may name another src)
from bench.harnesses.daemon import free_port, start_daemon  # noqa: E402,F401  (free_port: bench/durability.py)

PROJECTS = ("atlas", "borealis", "cinder")
MODULES = ("billing", "auth", "search", "ingest", "reports", "sync", "notify", "export", "cache", "admin")
NOUNS = ("queue", "token", "index", "batch", "schema", "webhook", "session", "ledger", "cursor", "quota",
         "invoice", "snapshot", "shard", "digest", "lease", "bucket")
VERBS = ("drain", "refresh", "rebuild", "parse", "retry", "merge", "validate", "flush", "resolve", "emit")
FACTS = ("must run inside the write transaction", "times out after 30 s under load",
         "keeps a per-tenant lock", "is called twice on reconnect", "drops rows with a null owner",
         "needs the feature flag on in staging", "logs the payload at debug level only",
         "was rewritten to stream instead of buffering", "uses the replica for reads",
         "returns early when the cache is warm", "is the only place that writes the audit trail",
         "silently truncates to 255 characters")
PREFS = ("prefer small pull requests with one concern each", "run the linters before every commit",
         "write the test before the fix", "keep migrations reversible", "no print debugging in commits",
         "use structured logging with a request id", "document every public function",
         "squash fixup commits before review", "pin every dependency version", "keep functions under 40 lines",
         "name branches after the ticket", "benchmarks go in bench/, never in tests")
FILLER = ("the staging database is reset every Sunday", "the old dashboard is kept for the finance team",
          "on-call rotates on Mondays", "the CI runners have 4 GB of memory", "design review happens on Thursdays",
          "vendor SDK updates go through security review", "the mobile app pins API version 3",
          "error budgets are tracked per quarter", "the wiki page for onboarding is outdated",
          "load tests run against the canary cluster")
START = datetime(2026, 3, 2, 8, 0, tzinfo=timezone.utc)  # a Monday
CONTEXT = "{project}: continuing work"


ADJS = ("stale", "pending", "remote", "local", "shadow", "partial", "nightly", "legacy", "primary", "cold",
        "hot", "soft")


def _ident(rng: random.Random) -> tuple[str, str]:
    """A function and a file name; thousands of combinations, so two notes rarely share one."""
    return (f"{rng.choice(VERBS)}_{rng.choice(ADJS)}_{rng.choice(NOUNS)}",
            f"{rng.choice(NOUNS)}_{rng.choice(NOUNS)}{rng.randint(1, 9)}.py")


class World:
    """Projects, tasks, preferences, filler and the schedule of sessions."""

    def __init__(self, n_sessions: int, seed: int, filler_per_project: int = 60) -> None:
        self.rng = rng = random.Random(seed)
        self.n_sessions = n_sessions
        self.memories: list[dict] = []
        self.sessions: list[dict] = []
        drift_at = n_sessions // 2
        per_project = {p: [] for p in PROJECTS}
        for i in range(n_sessions):  # ~4 sessions a day, projects interleaved
            at = START + timedelta(hours=6 * i + rng.randint(0, 90) / 60)
            project = PROJECTS[i % len(PROJECTS)] if rng.random() < 0.7 else rng.choice(PROJECTS)
            per_project[project].append(i)
            self.sessions.append({"index": i, "key": f"sim-{seed}-{i:04d}", "at": at, "project": project,
                                  "drifted": i >= drift_at})
        used: set[str] = set()
        for p in PROJECTS:
            prefs_old = [self._add(p, "preference", f"{p} convention: {t}", 0.75, START - timedelta(days=40))
                         for t in rng.sample(PREFS, 3)]
            drift_time = self.sessions[drift_at]["at"] - timedelta(hours=1) if drift_at < n_sessions else None
            prefs_new = [self._add(p, "preference", f"{p} convention from now on: {t}", 0.75, drift_time)
                         for t in rng.sample([x for x in PREFS if x not in {m["content"] for m in prefs_old}], 3)
                         ] if drift_time else []
            for n in range(filler_per_project):
                module = rng.choice(MODULES)
                fn, file = _ident(rng)
                self._add(p, "filler", f"{p} {module}: {rng.choice(FILLER)} (see {module}/{file})",
                          round(rng.uniform(0.3, 0.95), 2), START - timedelta(days=rng.uniform(1, 60)))
            # tasks: consecutive runs of 3-6 of the project's sessions
            idx = per_project[p]
            pos = 0
            while pos < len(idx):
                length = rng.randint(3, 6)
                run = idx[pos:pos + length]
                pos += length
                module = rng.choice(MODULES)
                while True:
                    fn, file = _ident(rng)
                    name = f"{module} {fn.replace('_', ' ')}"
                    if name not in used:
                        used.add(name)
                        break
                first_at = self.sessions[run[0]]["at"]
                task = {"project": p, "name": name, "module": module, "sessions": run, "memories": []}
                for j in range(7):
                    jfn, jfile = _ident(rng)
                    path = f"src/{p}/{module}/{jfile}"
                    written = first_at - timedelta(days=rng.uniform(0.5, 5)) if j < 5 else (
                        self.sessions[run[min(1, len(run) - 1)]]["at"] - timedelta(minutes=30))
                    m = self._add(p, "task", f"{p} {name}: {path} {jfn}() {rng.choice(FACTS)}",
                                  round(rng.uniform(0.35, 0.75), 2), written)
                    m.update(path=path, fn=jfn)
                    task["memories"].append(m)
                # one decision is revised mid-task: the old note stays, stale
                if len(run) >= 3:
                    old = rng.choice(task["memories"][:5])
                    revised_at = self.sessions[run[len(run) // 2]]["at"] - timedelta(minutes=30)
                    new = self._add(p, "task", f"{p} {name}: revised: {old['path']} {old['fn']}() "
                                    f"{rng.choice(FACTS)} (replaces the earlier note)", old["importance"], revised_at)
                    new.update(path=old["path"], fn=old["fn"])
                    old["stale_from"] = revised_at
                    task["memories"].append(new)
                for s in run:
                    self.sessions[s]["task"] = task
            for s in idx:
                self.sessions[s]["prefs"] = prefs_new if self.sessions[s]["drifted"] else prefs_old
                self.sessions[s]["stale_prefs"] = prefs_old if self.sessions[s]["drifted"] else []

    def _add(self, project: str, kind: str, content: str, importance: float, created: datetime) -> dict:
        m = {"n": len(self.memories), "project": project, "kind": kind, "content": content,
             "importance": importance, "created": created, "id": None, "stale_from": None}
        self.memories.append(m)
        return m

    def needed(self, plan: dict) -> list[dict]:
        at = plan["at"]
        live = [m for m in plan["task"]["memories"] + plan["prefs"]
                if m["created"] <= at and (m["stale_from"] is None or m["stale_from"] > at)]
        return [m for m in live if m["id"]]

    def stale(self, plan: dict) -> set[str]:
        at = plan["at"]
        out = {m["id"] for m in plan["task"]["memories"] if m["stale_from"] is not None and m["stale_from"] <= at}
        return out | {m["id"] for m in plan["stale_prefs"]}


def iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- daemon -----------------------------------------------------------------------------------
class Daemon:
    """A real `python -m kenning serve` in `home` with `config` as its config.yaml, started by the one starter
    bench and tests share (bench.harnesses.daemon.start_daemon: a free port, the health wait, its log in
    home/daemon.log); `url` is its base URL."""

    def __init__(self, home: Path, config: str) -> None:
        self._process = start_daemon(home, config, log_name="daemon.log", timeout_s=240)
        self.home, self.port, self.proc = home, self._process.port, self._process.proc
        self.url = self._process.base_url

    def stop(self) -> None:
        self._process.stop()


# -- metrics ----------------------------------------------------------------------------------
def ndcg10(order: list[str], needed: set[str]) -> float:
    ideal_n = min(len(needed), 10)
    if not ideal_n:
        return 0.0
    dcg = sum(1 / math.log2(i + 2) for i, m in enumerate(order[:10]) if m in needed)
    return dcg / sum(1 / math.log2(i + 2) for i in range(ideal_n))


def precision(top: list[str], needed: set[str]) -> float:
    return sum(1 for m in top if m in needed) / len(top) if top else 0.0


def restating(audit: dict, needed_mem: list[dict], known: set[str]) -> set[str]:
    """Memories kenning wrote itself (session-summary key facts) that restate a needed task note:
    they name its file and function, so they are as useful as the note."""
    marks = [(m["path"], m["fn"]) for m in needed_mem if m["kind"] == "task"]
    return {r["memory_id"] for r in audit["candidates"] if r["memory_id"] not in known
            and any(path in (r.get("content_preview") or "") and fn in (r.get("content_preview") or "")
                    for path, fn in marks)}


def prompt_metrics(audit: dict, needed_ids: set[str]) -> dict:
    """The first prompt's injection (a report column only: nothing at session start changes).
    k = what prompt 1 newly injected; baseline / fused = the top k of its recorded pool (less
    what session start showed) in recall order / in the predictor's fused order."""
    shown = {r["memory_id"] for r in audit["candidates"] if r["was_injected"] and r.get("inject_phase") == "session-start"}
    injected = [r["memory_id"] for r in audit["candidates"] if r["was_injected"] and r.get("inject_phase") == "prompt:1"]
    rest = [r for r in (audit.get("pools") or {}).get("prompt:1") or [] if r["memory_id"] not in shown]
    k = len(injected)
    if not rest or not k:  # no pool recorded (no trained predictor yet)
        return {"prompt_k": k, "prompt_pool": len(rest), "p_prompt_injected": precision(injected, needed_ids) if k else None,
                "p_prompt_baseline": None, "p_prompt_fused": None}
    base = [r["memory_id"] for r in sorted(rest, key=lambda r: r["baseline_rank"] or 10**6)]
    fused = [r["memory_id"] for r in sorted(rest, key=lambda r: r["final_rank"])]
    return {"prompt_k": k, "prompt_pool": len(rest), "p_prompt_injected": precision(injected, needed_ids),
            "p_prompt_baseline": precision(base[:k], needed_ids), "p_prompt_fused": precision(fused[:k], needed_ids)}


REPLAY_K = 8


def recall(top: list[str], needed: set[str]) -> float:
    return len(set(top) & needed) / len(needed) if needed else 0.0


def _orders(rows: list[dict], rank_key: str) -> list[str]:
    return [r["memory_id"] for r in sorted((r for r in rows if r.get(rank_key) is not None), key=lambda r: r[rank_key])]


def replay_lift(audit: dict, needed: set[str], k: int = REPLAY_K) -> dict:
    """Both recorded orders scored against the labels (counterfactual replay). For each pool
    (session start, the first prompt's) and for the union of both pools' top k // 2: recall and
    precision of the baseline's and of the predictor's top k; None where the predictor did not rank."""
    start = [r for r in audit["candidates"] if r.get("prefilter_source")]
    prompt = (audit.get("pools") or {}).get("prompt:1") or []
    out: dict = {}
    tops: dict[str, list[str]] = {"baseline": [], "predictor": []}
    for name, rows in (("start", start), ("prompt", prompt)):
        base, pred = _orders(rows, "baseline_rank"), _orders(rows, "predictor_rank")
        for arm, order in (("baseline", base), ("predictor", pred if pred else None)):
            out[f"r_{name}_{arm}"] = recall(order[:k], needed) if order is not None else None
            out[f"p_{name}_{arm}"] = precision(order[:k], needed) if order is not None else None
        if pred:  # each order's next k // 2 not already taken (a later pool adds only what is new)
            for arm, order in (("baseline", base), ("predictor", pred)):
                tops[arm] += [m for m in order if m not in tops[arm]][:k // 2]
    both = bool(tops["predictor"])
    for arm in ("baseline", "predictor"):
        out[f"r_union_{arm}"] = recall(tops[arm], needed) if both else None
        out[f"p_union_{arm}"] = precision(tops[arm], needed) if both else None
    for name in ("start", "prompt", "union"):
        b, p = out[f"r_{name}_baseline"], out[f"r_{name}_predictor"]
        out[f"replay_r_lift_{name}"] = None if b is None or p is None else p - b
        b, p = out[f"p_{name}_baseline"], out[f"p_{name}_predictor"]
        out[f"replay_p_lift_{name}"] = None if b is None or p is None else p - b
    return out


def interleave_lift(audit: dict, needed: set[str]) -> dict:
    """What each team's picks brought in an interleaved session (None: not interleaved)."""
    cmp = audit.get("comparison") or {}
    credit = cmp.get("credit") if cmp.get("method") == "interleave" else None
    if not credit or not needed:
        return {"interleaved": False, "il_lift": None, "il_winner": None, "il_picks_predictor": None,
                "il_lift_start": None, "il_lift_prompt": None, "il_picks_start": None, "il_picks_prompt": None}
    got = {team: sum(1 for m, t in credit.items() if t == team and m in needed) for team in ("baseline", "predictor")}
    picks = {team: sum(1 for t in credit.values() if t == team) for team in ("baseline", "predictor")}
    phase_of = {r["memory_id"]: "start" if r.get("inject_phase") == "session-start" else "prompt"
                for r in audit["candidates"] if r["was_injected"]}
    by_phase: dict = {}
    for phase in ("start", "prompt"):  # where the picks were drafted: session start, or the first prompt
        mine = {m: t for m, t in credit.items() if phase_of.get(m) == phase}
        won = {team: sum(1 for m, t in mine.items() if t == team and m in needed) for team in ("baseline", "predictor")}
        by_phase[f"il_lift_{phase}"] = (won["predictor"] - won["baseline"]) / len(needed)
        by_phase[f"il_picks_{phase}"] = len(mine)
    return {"interleaved": True, "il_lift": (got["predictor"] - got["baseline"]) / len(needed), **by_phase,
            "il_winner": cmp.get("winner"), "il_picks_predictor": picks["predictor"],
            "il_contested": picks["predictor"] + picks["baseline"],  # the rest are shared (both would have picked them)
            "il_shared": sum(1 for t in credit.values() if t == "shared"),
            "il_precision_predictor": got["predictor"] / picks["predictor"] if picks["predictor"] else None,
            "il_precision_baseline": got["baseline"] / picks["baseline"] if picks["baseline"] else None}


def interleave_detail(audit: dict, needed: set[str], kind_of: dict[str, str]) -> list[list]:
    """Each credited pick of an interleaved session: [phase, team, kind, needed, baseline rank,
    predictor rank] (ranks in the pool it was drafted from), to read where the two rankings differ."""
    cmp = audit.get("comparison") or {}
    credit = cmp.get("credit") if cmp.get("method") == "interleave" else None
    if not credit:
        return []
    ranks = {r["memory_id"]: ("start", r.get("baseline_rank"), r.get("predictor_rank"))
             for r in audit["candidates"] if r.get("prefilter_source")}
    for r in (audit.get("pools") or {}).get("prompt:1") or []:
        ranks.setdefault(r["memory_id"], ("prompt", r.get("baseline_rank"), r.get("predictor_rank")))
        if ranks[r["memory_id"]][0] == "start" and r["memory_id"] in credit:
            ranks[r["memory_id"]] = ("prompt", r.get("baseline_rank"), r.get("predictor_rank"))
    phase_of = {r["memory_id"]: "start" if r.get("inject_phase") == "session-start" else "prompt"
                for r in audit["candidates"] if r["was_injected"]}
    return [[phase_of.get(m), t, kind_of.get(m, "kenning-written"), m in needed, *ranks.get(m, (None, None, None))[1:]]
            for m, t in credit.items()]


def kinds(ids: list[str], kind_of: dict[str, str], needed: set[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in ids:
        k = kind_of.get(m, "kenning-written") + ("" if m in needed else ":unneeded")
        out[k] = out.get(k, 0) + 1
    return out


def session_metrics(audit: dict, needed_ids: set[str], kind_of: dict[str, str] | None = None) -> dict:
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
           "ndcg_predictor": None, "p_predictor": None, "p_oracle": min(len(in_pool), k) / k}
    if scored:
        pred = [r["memory_id"] for r in sorted(scored, key=lambda r: r["predictor_rank"])]
        out["ndcg_predictor"] = ndcg10(pred, in_pool)
        out["p_predictor"] = precision(pred[:k], needed_ids)
        if kind_of is not None:
            out["kinds_predictor"] = kinds(pred[:k], kind_of, needed_ids)
    if kind_of is not None:
        out["kinds_baseline"] = kinds(base[:k], kind_of, needed_ids)
        out["kinds_fused"] = kinds(injected, kind_of, needed_ids)
    return out


# -- the simulated user -------------------------------------------------------------------------
def memory_body(m: dict, types: dict[str, str] | None = None, project_rules: bool = True) -> dict:
    """One world memory as the user stores it. `types`: a type per kind (task_sim's), else the write
    path types it. `project_rules`: the project's conventions are preferences the user states as
    project rules ("atlas convention: …"), stored the way `kenning remember --applies project` stores
    them — project scope, so they may open a session (issue 31's gate); else the write path tells
    their scope from their words (task_sim's world, as its earlier figures were measured)."""
    body = {"content": m["content"], "project": m["project"], "importance": m["importance"],
            "created_at": iso(m["created"]), "tags": [m["kind"]], "source": "sim"}
    if types:
        body["type"] = types[m["kind"]]
    if m["kind"] == "preference" and project_rules:
        body.update(type="preference", applies="project")
    return body


def insert_memories(client: httpx.Client, world: World, until: datetime, types: dict[str, str] | None = None,
                    project_rules: bool = True) -> int:
    """The world's memories written by `until` that are not stored yet, through the batch API (`memory_body`)."""
    batch = [m for m in world.memories if m["id"] is None and m["created"] <= until]
    for i in range(0, len(batch), 500):
        chunk = batch[i:i + 500]
        body = {"memories": [memory_body(m, types, project_rules) for m in chunk]}
        r = client.post("/api/memory/batch", json=body, timeout=900)
        r.raise_for_status()
        for m, res in zip(chunk, r.json()["results"]):
            m["id"] = res["id"]
    return len(batch)


def rate(shown: list[str], needed: set[str], stale: set[str], rng: random.Random) -> dict[str, float]:
    """The agent's ratings: used ≈ 0.8-1, stale ≈ -0.6, unused 0.0 (sometimes a little off)."""
    out = {}
    for m in shown:
        if m in needed:
            value = rng.uniform(0.7, 1.0)
        elif m in stale:
            value = rng.uniform(-0.8, -0.4)
        else:
            value = 0.0 if rng.random() < 0.8 else rng.uniform(-0.3, 0.2)
        if rng.random() < 0.05:  # an agent is sometimes wrong
            value = -value if value else 0.6
        out[m] = round(value, 3)
    return out


@dataclass
class Drive:
    """What one simulated session sent and got back (drive_session)."""

    start: dict  # the session-start answer
    phases: dict[str, list[str]]  # "start", "prompt:1", ...: the memory ids each newly showed
    answers: list[dict]  # each prompt's answer, in order
    ratings_sent: int
    audit: dict  # GET /api/predictor/audit/{key} after session end


def quote_used(shown: list[str], needed: set[str], by_id: dict[str, dict]) -> str:
    """The agent's answer: it quotes the task notes it used (their files and functions land in the
    transcript, which is how kenning sees use), else says it found nothing recorded."""
    used = [by_id[m] for m in shown if m in needed and m in by_id and by_id[m]["kind"] == "task"][:3]
    if not used:
        return "Assistant: nothing recorded helps here; I read the code instead."
    notes = "; ".join(f"{m['path']}: {m['fn']}() {m['content'].split('() ', 1)[-1]}" for m in used)
    return f"Assistant: from the notes I used — {notes}. I changed {used[0]['path']} accordingly."


def drive_session(client: httpx.Client, plan: dict, prompts: list[str], needed: set[str], stale: set[str],
                  by_id: dict[str, dict], rng: random.Random, feedback: str = "every") -> Drive:
    """One session as a harness sends it (the loop predictor_sim and task_sim share): session start
    naming only the project; each prompt, carrying the agent's ratings of everything shown so far
    (`feedback`: on every prompt, on a third of them, never), answered by quoting the notes used;
    with `every`, a last rating at the end; session end with the transcript (`wait`); the audit."""
    key, at, project = plan["key"], plan["at"], plan["project"]
    r = client.post("/api/hooks/session-start", json={
        "session_key": key, "project": project, "cwd": f"/home/dev/{project}",
        "context": CONTEXT.format(project=project), "timestamp": iso(at), "harness": "sim"})
    r.raise_for_status()
    start = r.json()
    shown = list(start.get("memory_ids") or [])
    phases = {"start": list(shown)}
    answers: list[dict] = []
    transcript: list[str] = []
    ratings_sent = 0
    for i, prompt in enumerate(prompts):
        body: dict[str, object] = {"session_key": key, "prompt": prompt,
                                   "timestamp": iso(at + timedelta(minutes=4 + 9 * i))}
        give = feedback == "every" or (feedback == "third" and rng.random() < 1 / 3)
        if give and shown:
            body["memory_feedback"] = rate(shown, needed, stale, rng)
            ratings_sent += 1
        r = client.post("/api/hooks/user-prompt-submit", json=body)
        r.raise_for_status()
        answers.append(r.json())
        phases[f"prompt:{i + 1}"] = [m for m in answers[-1].get("memory_ids") or [] if m not in shown]
        shown += phases[f"prompt:{i + 1}"]
        transcript += [f"User: {prompt}", quote_used(shown, needed, by_id)]
    if feedback == "every" and shown:  # the agent's last word on what it was shown
        client.post("/api/hooks/feedback", json={"session_key": key, "memory_feedback": rate(shown, needed, stale, rng)})
    r = client.post("/api/hooks/session-end", json={
        "session_key": key, "transcript": "\n".join(transcript), "timestamp": iso(at + timedelta(minutes=50)),
        "wait": True}, timeout=600)
    r.raise_for_status()
    audit = client.get(f"/api/predictor/audit/{key}").json()
    return Drive(start, phases, answers, ratings_sent, audit)


def run_session(client: httpx.Client, world: World, plan: dict, feedback: str) -> dict:
    rng = random.Random(f"session-{plan['key']}")
    key, project, task = plan["key"], plan["project"], plan["task"]
    needed_mem = world.needed(plan)
    needed_ids = {m["id"] for m in needed_mem}
    stale = world.stale(plan)
    by_id = {m["id"]: m for m in world.memories if m["id"]}
    task_mem = [m for m in needed_mem if m["kind"] == "task"]
    asks = rng.sample(task_mem, min(len(task_mem), rng.randint(2, 3)))
    prompts = [f"let's continue on the {task['name']} work in {project}"]
    prompts += [f"the {m['fn']} in {m['path']} still misbehaves, what did we decide?" for m in asks]
    drive = drive_session(client, plan, prompts, needed_ids, stale, by_id, rng, feedback)
    audit = drive.audit
    kind_of = {m["id"]: m["kind"] + (":stale" if m["id"] in stale else "") for m in world.memories if m["id"]}
    needed_ids |= restating(audit, needed_mem, set(kind_of))
    metrics = session_metrics(audit, needed_ids, kind_of)
    metrics.update(prompt_metrics(audit, needed_ids))
    metrics.update(replay_lift(audit, needed_ids))
    metrics.update(interleave_lift(audit, needed_ids))
    metrics["il_detail"] = interleave_detail(audit, needed_ids, kind_of)
    labels = audit.get("labels") or {}
    metrics.update(needed_ids=sorted(needed_ids), stale_ids=sorted(stale), index=plan["index"], key=key, project=project, task=task["name"], drifted=plan["drifted"],
                   cut=drive.start.get("cut") or [], ratings_sent=drive.ratings_sent,
                   confidence=labels.get("confidence"), usable=labels.get("usable"),
                   judge_confidence=(audit.get("session_score") or {}).get("confidence"),
                   alpha_used=(audit.get("context") or {}).get("alpha"),
                   predictor_scored=bool((audit.get("context") or {}).get("scored")),
                   comparison=bool(audit.get("comparison")))
    return metrics


def settle(client: httpx.Client, limit_s: float = 180.0) -> dict:
    """Status once a started sidecar is ready and no training runs: real sessions are hours
    apart, the simulation's seconds apart, so it waits for what real time would have allowed."""
    deadline = time.monotonic() + limit_s
    while True:
        st = client.get("/api/predictor/status").json()
        side = st.get("sidecar") or {}
        busy = st.get("training_in_progress") or (side.get("running") and not side.get("ready"))
        if not busy or time.monotonic() > deadline:
            return st
        time.sleep(0.5)


def mean(values: list) -> float | None:
    vals = [v for v in values if v is not None]
    return round(sum(vals) / len(vals), 4) if vals else None


def windows(rows: list[dict], status_log: list[dict], size: int) -> list[dict]:
    out = []
    for start in range(0, len(rows), size):
        part = rows[start:start + size]
        st = status_log[start:start + len(part)]
        before = status_log[start - 1] if start else {"trainings": 0, "swaps": 0}
        out.append({
            "sessions": f"{start + 1}-{start + len(part)}", "first": start + 1, "n": len(part),
            **{f"{m}_{arm}": mean([r[f"{m}_{arm}"] for r in part])
               for m in ("ndcg", "p") for arm in ("baseline", "predictor", "fused")},
            "p_fused_minus_baseline": mean([r["p_fused"] - r["p_baseline"] for r in part]),
            **{f"p_prompt_{arm}": mean([r.get(f"p_prompt_{arm}") for r in part])
               for arm in ("injected", "baseline", "fused")},
            "p_oracle": mean([r["p_oracle"] for r in part]),
            "prompt_pool": mean([r.get("prompt_pool") for r in part]),  # the first prompt's recorded pool, less start's
            "needed_in_pool": mean([r["needed_in_pool"] for r in part]),
            "trainings": st[-1]["trainings"] - before["trainings"], "swaps": st[-1]["swaps"] - before["swaps"],
            "alpha_used": mean([r["alpha_used"] for r in part]),
            "alpha_end": st[-1]["alpha"], "success_rate_end": st[-1]["success_rate"],
            "cold_start": not (start > 0 and status_log[start - 1]["cold_start_exited"]),
            "confidence": mean([r["confidence"] for r in part]),
            "usable": sum(1 for r in part if r["usable"]),
            "predictor_scored": sum(1 for r in part if r["predictor_scored"]),
            "cut": sum(1 for r in part if r["cut"]),
            **{f"replay_{m}_lift_{pool}": mean([r[f"replay_{m}_lift_{pool}"] for r in part])
               for m in ("r", "p") for pool in ("start", "prompt", "union")},
            "interleaved": sum(1 for r in part if r["interleaved"]),
            "il_lift": mean([r["il_lift"] for r in part]),
            "il_contested": mean([r.get("il_contested") for r in part]),
            **{f"il_{m}_{phase}": mean([r.get(f"il_{m}_{phase}") for r in part])
               for m in ("lift", "picks") for phase in ("start", "prompt")},
            "il_wins": sum(1 for r in part if r["il_winner"] == "predictor"),
            "il_losses": sum(1 for r in part if r["il_winner"] == "baseline"),
        })
    return out


def lift_summary(rows: list[dict], win: list[dict]) -> dict:
    """The issue-32 figures over the last half of the run: mean lifts, and the worst window there."""
    half = len(rows) // 2
    late = rows[half:]
    late_w = [w for w in win if w["first"] > half]
    out: dict = {"from_session": half + 1, "sessions": len(late)}
    for pool in ("start", "prompt", "union"):
        out[f"replay_r_lift_{pool}"] = mean([r[f"replay_r_lift_{pool}"] for r in late])
        out[f"replay_p_lift_{pool}"] = mean([r[f"replay_p_lift_{pool}"] for r in late])
        out[f"replay_r_lift_{pool}_worst_window"] = min(
            (w[f"replay_r_lift_{pool}"] for w in late_w if w[f"replay_r_lift_{pool}"] is not None), default=None)
        out[f"r_{pool}_baseline"] = mean([r[f"r_{pool}_baseline"] for r in late])
        out[f"r_{pool}_predictor"] = mean([r[f"r_{pool}_predictor"] for r in late])
    il = [r for r in late if r["interleaved"]]
    out.update({"interleaved": len(il), "il_lift": mean([r["il_lift"] for r in il]),
                "il_wins": sum(1 for r in il if r["il_winner"] == "predictor"),
                "il_losses": sum(1 for r in il if r["il_winner"] == "baseline"),
                "il_lift_worst_window": min((w["il_lift"] for w in late_w if w["il_lift"] is not None), default=None),
                "il_contested": mean([r.get("il_contested") for r in il]), "il_shared": mean([r.get("il_shared") for r in il]),
                **{f"il_{m}_{phase}": mean([r.get(f"il_{m}_{phase}") for r in il])
                   for m in ("lift", "picks") for phase in ("start", "prompt")},
                "il_precision_predictor": mean([r.get("il_precision_predictor") for r in il]),
                "il_precision_baseline": mean([r.get("il_precision_baseline") for r in il])})
    return out


def verdict(win: list[dict], status_log: list[dict], feedback: str) -> dict:
    first_swap = next((s["index"] + 1 for s in status_log if s["swaps"] > 0), None)
    exit_at = next((s["index"] + 1 for s in status_log if s["cold_start_exited"]), None)
    after_cold = [w for w in win if not w["cold_start"]]
    worst = min((w["p_fused_minus_baseline"] for w in after_cold), default=None)
    late = [w for w in win if w["first"] >= 101]
    late_min = min((w["p_fused_minus_baseline"] for w in late), default=None)
    out = {"first_swap_session": first_swap, "cold_start_exit_session": exit_at,
           "worst_delta_after_cold_start": worst, "target_never_below_met": worst is None or worst >= -0.02,
           "min_delta_from_session_101": late_min, "windows_after_cold_start": len(after_cold)}
    if feedback != "none":
        out["target_first_swap_by_20_met"] = first_swap is not None and first_swap <= 20
        out["target_lift_0_10_from_101_met"] = late_min is not None and late_min >= 0.10
    return out


def print_table(report: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    cfg = report["config"]
    t = Table(title=f"predictor_sim feedback={cfg['feedback']}: {cfg['sessions']} sessions, {cfg['memories']} memories")
    cols = ["sessions", "p_baseline", "p_predictor", "p_fused", "p_fused_minus_baseline", "ndcg_baseline",
            "ndcg_predictor", "ndcg_fused", "p_oracle", "p_prompt_baseline", "p_prompt_fused", "trainings", "swaps", "alpha_end", "success_rate_end",
            "confidence", "usable", "predictor_scored", "cold_start"]
    heads = ["sess", "P base", "P pred", "P fused", "ΔP", "NDCG base", "NDCG pred", "NDCG fused", "P max",
             "P1 base", "P1 fused",
             "train", "swap", "α", "succ", "conf", "usable", "scored", "cold"]
    for h in heads:
        t.add_column(h, justify="right")
    for w in report["windows"]:
        t.add_row(*["-" if w[c] is None else (f"{w[c]:.3f}" if isinstance(w[c], float) else str(w[c])) for c in cols])
    console = Console(stderr=True, width=200)
    console.print(t)
    console.print(f"verdict: {report['verdict']}")
    lift = Table(title="predictor lift (issue 32): by replay (predictor − baseline, top 8) and by interleaving")
    cols = ["sessions", "replay_r_lift_start", "replay_r_lift_prompt", "replay_r_lift_union", "replay_p_lift_union",
            "interleaved", "il_lift", "il_lift_start", "il_lift_prompt", "il_wins", "il_losses", "alpha_end"]
    for c in cols:
        lift.add_column(c, justify="right")
    for w in report["windows"]:
        lift.add_row(*["-" if w[c] is None else (f"{w[c]:.3f}" if isinstance(w[c], float) else str(w[c])) for c in cols])
    console.print(lift)
    console.print(f"last half: {report['lift']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--feedback", choices=["every", "third", "none"], default="every")
    ap.add_argument("--filler", type=int, default=60, help="filler notes per project")
    ap.add_argument("--window", type=int, default=25)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--config", default="", help="config.yaml text for the daemon (default: empty = defaults)")
    ap.add_argument("--home", type=Path, default=None, help="KENNING_HOME (default: a tmp dir, removed)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--stop-after", type=int, default=None,
                    help="run only the first N sessions of the --sessions world (same world, drift at --sessions/2): "
                         "a quick look at the drift window")
    args = ap.parse_args()

    world = World(args.sessions, args.seed, args.filler)
    tmp = tempfile.TemporaryDirectory(prefix="kenning-predsim-") if args.home is None else None
    home = args.home or Path(tmp.name) / "home"
    t0 = time.perf_counter()
    daemon = Daemon(home, args.config)
    rows, status_log = [], []
    try:
        with httpx.Client(base_url=daemon.url, timeout=300) as client:
            inserted = insert_memories(client, world, START)
            for plan in world.sessions[:args.stop_after]:
                inserted += insert_memories(client, world, plan["at"])
                rows.append(run_session(client, world, plan, args.feedback))
                st = settle(client)
                log = client.get("/api/predictor/training", params={"limit": 500}).json()
                status_log.append({
                    "index": plan["index"], "alpha": st.get("alpha"), "success_rate": st.get("success_rate"),
                    "cold_start_exited": st.get("cold_start_exited"), "model_version": st.get("model_version"),
                    "sidecar_running": (st.get("sidecar") or {}).get("running"),
                    "trainings": log.get("total", 0), "swaps": sum(1 for r in log.get("items", []) if r["swapped"])})
                if (plan["index"] + 1) % 10 == 0:
                    last = rows[-10:]
                    print(f"[{time.perf_counter() - t0:6.0f}s] session {plan['index'] + 1}/{args.sessions} "
                          f"α={st.get('alpha'):.2f} succ={st.get('success_rate'):.2f} v{st.get('model_version')} "
                          f"usable={sum(1 for r in last if r['usable'])}/10 "
                          f"P base {mean([r['p_baseline'] for r in last])} fused {mean([r['p_fused'] for r in last])}",
                          file=sys.stderr, flush=True)
            training = client.get("/api/predictor/training", params={"limit": 500}).json()
            final_status = client.get("/api/predictor/status").json()
    finally:
        daemon.stop()
        if tmp is not None:
            tmp.cleanup()
    runs = training.get("items", [])
    durations = [r["duration_ms"] for r in runs if r.get("duration_ms") is not None]
    win = windows(rows, status_log, args.window)
    report = {
        "benchmark": "predictor_sim", "daemon": "real `python -m kenning serve` subprocess over HTTP",
        "config": {"sessions": args.sessions, "feedback": args.feedback, "memories": len(world.memories),
                   "inserted": inserted, "seed": args.seed, "window": args.window, "projects": list(PROJECTS),
                   "daemon_config": args.config or "(empty: all defaults)"},
        "windows": win, "verdict": verdict(win, status_log, args.feedback), "lift": lift_summary(rows, win),
        "overall": {k: mean([r[k] for r in rows]) for k in
                    ("ndcg_baseline", "ndcg_predictor", "ndcg_fused", "p_baseline", "p_predictor", "p_fused",
                     "p_oracle", "confidence", "judge_confidence", "p_prompt_injected", "p_prompt_baseline",
                     "p_prompt_fused")},
        "usable_sessions": sum(1 for r in rows if r["usable"]),
        "sessions_with_cut_stages": sum(1 for r in rows if r["cut"]),
        "training": {"runs": len(runs), "swapped": sum(1 for r in runs if r.get("swapped")),
                     "duration_ms_mean": mean(durations), "duration_ms_max": max(durations, default=None),
                     "log": [{k: r.get(k) for k in ("model_version", "trigger", "loss", "sample_count", "duration_ms",
                                                    "swapped", "canary_ndcg", "canary_topk_overlap", "error")}
                             for r in reversed(runs)]},
        "final_status": {k: final_status.get(k) for k in ("alpha", "success_rate", "model_version",
                                                          "cold_start_exited", "comparisons", "training_sessions",
                                                          "status_line", "drift_resets")},
        "wall_s": round(time.perf_counter() - t0, 1), "sessions": rows, "status_log": status_log,
    }
    text = json.dumps(report, indent=2, default=str)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(json.dumps({k: v for k, v in report.items() if k not in ("sessions", "status_log")}, default=str)[:20000])
    print_table(report)


if __name__ == "__main__":
    main()
