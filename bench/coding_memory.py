"""Coding memory (issue 10): does a project decision from past chats or git history reach the agent?

    .venv/bin/python bench/coding_memory.py --out /tmp/coding_memory.json
    .venv/bin/python bench/coding_memory.py --arms default --decoys 20   # quick look

Data: ../shared/bench/sde/ (sde-bench development split, read in place, never copied; see its
README): 30 bug-fix tasks on boltons whose fix hinges on a decision recorded in a commit
(`history`), a past chat (`conversation`) or a chat amended by a later one
(`conversation-amended`), 140 decoy chats and the 1,622 real boltons commits.

Each kenning arm is a real daemon (`python -m kenning serve`, temp KENNING_HOME, free port):
1. a real git repository is built from the commits (`git fast-import`, real dates) and ingested
   with POST /api/ingest/git (the code path of `kenning ingest git`); on a daemon without that
   route (the code before issue 10) the same commit texts go through POST /api/memory/batch;
2. the timeline (seeded): the task chats, the decoys and each history task's decision commit and
   later regression commit ('cause_subject') fall in the 100 days before now, amended chats'
   B at least 20 days after A. Commits are committed to the repository at their date and the
   repository re-ingested (incremental); chats are replayed as agent sessions through the hook
   endpoints: session-start, user-prompt-submit per user turn, session-end with a Claude Code
   JSONL transcript (wait: true), every call with its timestamp;
3. the pipeline queue is drained, then per task a new session in the project: session-start,
   then `bug_report` as the first prompt; what both inject is what the agent is given;
4. then per task POST /api/memory/recall {query: bug_report, limit: 10, project}.
Provenance: a memory counts for a chat through its session_key, for a commit through its sha
metadata, and for what it was derived from through metadata.source_memory_id / derived_from
(followed transitively). A task's decision units: its chat (conversation), its decision
commit (history), chat B (amended; chat A is the stale rule). boltons-omdset-001 names no
decision commit in the data, so it is reported as unscorable and left out of the rates.

Measured per source and overall: decision injected (session-start + first-prompt injection
holds a memory from the decision units), recall hit@5 / hit@10 / MRR@10, amended
later-before-stale (the later rule appears, and before any stale one) and stale-only rates (on
the injection and on the recall ranking), injected characters per task, degraded hook answers, and the tasks whose hook answer had a stage cut by the latency budget (`cut_hook_answers`).
All tasks share one store (as one developer's history would), so a history task's twin chat
holds the same policy: `family_injected` / `family_hit@10` also accept the decision from any
task of the family (a lenient reading, for diagnosis; the targets use the strict one).
Baselines in the same run: plain BM25 (bench/locomo_lib.py reference) over the raw units (every
chat turn and every commit's subject + body), and kenning with `sessions: {episodes: false}`
(reported as skipped, with the reason, on a daemon whose config has no such key).
Issue 22 columns (what kenning writes and shows unasked): `store.typed_per_decoy_chat` (memories
typed constraint / decision / gotcha / preference written in the decoy chats' sessions, per decoy
chat; `_not_in_review` leaves out those written needs_review), `store.typed_by_origin`,
`store.typed_by_rule` (metadata.claim.rule) and `session_start_slots` (the session-start hook's
memory ids over all task sessions, by origin: decoy, prompt = an earlier task session's bug
report, decision_chat, decision_commit, cause_commit, commit, other).
Targets (issue 10): injected >= 0.90; hit@10 >= BM25's on every source; amended
later-before-stale >= 0.80 and stale-only 0; injected <= 8,000 characters per task.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo_lib import ReferenceBM25  # noqa: E402
from predictor_sim import Daemon  # noqa: E402  (real `python -m kenning serve`, temp home, free port)



def default_data() -> Path:
    """../shared/bench/sde from the repository root (or from any folder above it: worktrees)."""
    for parent in Path(__file__).resolve().parents[1:]:
        if (parent.parent / "shared" / "bench" / "sde" / "tasks.json").exists():
            return parent.parent / "shared" / "bench" / "sde"
    return Path("../shared/bench/sde")


PROJECT = "boltons"
CWD = "/src/boltons"
SOURCES = ("history", "conversation", "conversation-amended")
WINDOW_DAYS = 100
AMEND_GAP_DAYS = 20
TURN_GAP = timedelta(minutes=2)
K = 10
ARMS = {"default": None, "episodes-off": "sessions:\n  episodes: false\n"}


# -- data and timeline ------------------------------------------------------------------------------
@dataclass
class Chat:
    key: str  # the session key it is replayed under
    turns: list[dict]
    at: datetime


@dataclass
class PlantedCommit:
    key: str  # "decision:<task>" or "cause:<task>"
    subject: str
    body: str
    module: str
    at: datetime
    sha: str = ""


@dataclass
class Task:
    id: str
    source: str
    bug_report: str
    gold: set[str] = field(default_factory=set)  # unit keys holding the decision
    stale: set[str] = field(default_factory=set)  # amended: the superseded rule's units
    family_gold: set[str] = field(default_factory=set)  # gold of every task of the family (same policy)

    @property
    def scorable(self) -> bool:
        return bool(self.gold)


def utc_iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def family(task_id: str) -> str:
    """boltons-budget-history-001 -> boltons-budget (a task and its -history / -amended twins)."""
    return re.sub(r"(-history|-amended)?-\d+$", "", task_id)


def load(data: Path, decoy_limit: int | None, seed: int, now: datetime):
    tasks_raw = json.loads((data / "tasks.json").read_text())
    decoys = json.loads((data / "decoy_conversations.json").read_text())[:decoy_limit]
    commits = json.loads((data / "boltons_commits.json").read_text())
    rng = random.Random(seed)
    start = now - timedelta(days=WINDOW_DAYS)

    def when(lo: float = 0.0, hi: float = WINDOW_DAYS - 10) -> datetime:
        return start + timedelta(days=rng.uniform(lo, hi), minutes=rng.randrange(0, 600))

    tasks, chats, planted = [], [], []
    for raw in tasks_raw:
        task = Task(raw["task_id"], raw["source"], raw["bug_report"])
        if raw["source"] == "conversation":
            chats.append(Chat(f"chat-{task.id}", raw["conversations"], when()))
            task.gold = {f"session:chat-{task.id}"}
        elif raw["source"] == "conversation-amended":
            first, later = raw["conversations"]
            a_at = when(0, WINDOW_DAYS - 10 - AMEND_GAP_DAYS - 5)
            b_at = a_at + timedelta(days=AMEND_GAP_DAYS + rng.uniform(0, 10))
            chats += [Chat(f"chat-{task.id}-A", first, a_at), Chat(f"chat-{task.id}-B", later, b_at)]
            task.gold, task.stale = {f"session:chat-{task.id}-B"}, {f"session:chat-{task.id}-A"}
        elif raw.get("decision_subject"):
            d_at = when(0, WINDOW_DAYS - 30)
            planted.append(PlantedCommit(f"decision:{task.id}", raw["decision_subject"], raw["decision_rationale"],
                                         raw["module"], d_at))
            planted.append(PlantedCommit(f"cause:{task.id}", raw["cause_subject"], "", raw["module"],
                                         d_at + timedelta(days=rng.uniform(5, 20))))
            task.gold = {f"decision:{task.id}"}
        tasks.append(task)
    families: dict[str, set[str]] = {}
    for task in tasks:
        families.setdefault(family(task.id), set()).update(task.gold)
    for task in tasks:
        task.family_gold = families[family(task.id)] if task.gold else set()
    for i, decoy in enumerate(decoys):
        chats.append(Chat(f"decoy-{i:03d}", decoy["turns"], when()))
    chats.sort(key=lambda c: c.at)
    planted.sort(key=lambda p: p.at)
    return tasks, chats, planted, commits


# -- the git repository -------------------------------------------------------------------------------
def _git(repo: Path, *args: str, env: dict | None = None, stdin: bytes | None = None) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True,
                          env={**os.environ, **(env or {})}, check=False)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args[:2])} failed: {done.stderr.decode(errors='replace')[:500]}")
    return done.stdout.decode()


def _ident(date: str) -> str:
    dt = datetime.fromisoformat(date)
    offset = dt.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    return f"boltons dev <dev@boltons.invalid> {int(dt.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


def build_repo(repo: Path, commits: list[dict]) -> dict[str, str]:
    """The real boltons history (oldest first) as a git repository via fast-import; sha by index."""
    _git(repo.parent, "init", "-q", "-b", "main", str(repo))
    stream = bytearray()
    for i, c in enumerate(reversed(commits)):
        message = (c["subject"] + ("\n\n" + c["body"] if c["body"] else "") + "\n").encode()
        stream += f"commit refs/heads/main\nmark :{i + 1}\nauthor {_ident(c['date'])}\ncommitter {_ident(c['date'])}\n".encode()
        stream += f"data {len(message)}\n".encode() + message
        stream += f"M 100644 inline HISTORY\ndata {len(c['sha'])}\n{c['sha']}\n\n".encode()
    marks = repo / ".git" / "bench-marks"
    _git(repo, "fast-import", "--quiet", f"--export-marks={marks}", stdin=bytes(stream))
    _git(repo, "checkout", "-q", "main")
    by_mark = dict(line.split() for line in marks.read_text().splitlines())
    return {c["sha"]: by_mark[f":{i + 1}"] for i, c in enumerate(reversed(commits))}


def commit_planted(repo: Path, p: PlantedCommit) -> str:
    path = repo / p.module
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(f"# {p.subject}\n")
    _git(repo, "add", p.module)
    stamp = p.at.strftime("%Y-%m-%dT%H:%M:%S+0000")
    env = {"GIT_AUTHOR_NAME": "boltons dev", "GIT_AUTHOR_EMAIL": "dev@boltons.invalid", "GIT_AUTHOR_DATE": stamp,
           "GIT_COMMITTER_NAME": "boltons dev", "GIT_COMMITTER_EMAIL": "dev@boltons.invalid",
           "GIT_COMMITTER_DATE": stamp}
    message = p.subject + ("\n\n" + p.body if p.body else "")
    _git(repo, "commit", "-q", "-F", "-", env=env, stdin=message.encode())
    return _git(repo, "rev-parse", "HEAD").strip()


# -- the daemon ---------------------------------------------------------------------------------------
def start_daemon(home: Path, config_yaml: str | None) -> tuple[Daemon | None, str | None]:
    """(daemon, None), or (None, why) when the daemon refuses the config or does not start."""
    try:
        return Daemon(home, config_yaml or ""), None
    except RuntimeError as exc:
        lines = [line for line in str(exc).strip().splitlines() if line.strip()]
        return None, (lines[-1] if lines else "daemon did not start")[:500]


def post(http: httpx.Client, path: str, body: dict, timeout: float = 600) -> dict:
    response = http.post(path, json=body, timeout=timeout)
    if response.status_code >= 400:
        raise RuntimeError(f"POST {path} -> {response.status_code}: {response.text[:300]}")
    return response.json()


def ingest_repo(http: httpx.Client, repo: Path, commit_texts: dict[str, tuple[str, str, str]]) -> dict:
    """POST /api/ingest/git (wait); on a daemon without it, the same commits via /api/memory/batch."""
    response = http.post("/api/ingest/git", json={"path": str(repo), "project": PROJECT, "wait": True}, timeout=3600)
    if response.status_code != 404:
        if response.status_code >= 400:
            raise RuntimeError(f"ingest git -> {response.status_code}: {response.text[:300]}")
        return {"via": "/api/ingest/git", **response.json()}
    shas = _git(repo, "rev-list", "--no-merges", "--reverse", "HEAD").split()
    state = repo / ".git" / "bench-batched"
    done = set(state.read_text().split()) if state.exists() else set()
    todo = [s for s in shas if s not in done]
    for i in range(0, len(todo), 256):
        chunk = todo[i:i + 256]
        post(http, "/api/memory/batch", {"memories": [
            {"content": (commit_texts[s][0] + ("\n\n" + commit_texts[s][1] if commit_texts[s][1] else "")),
             "project": PROJECT, "source": "git", "tags": ["git"], "created_at": commit_texts[s][2],
             "metadata": {"sha": s}} for s in chunk]}, timeout=3600)
    state.write_text("\n".join(sorted(done | set(todo))))
    return {"via": "/api/memory/batch (no /api/ingest/git on this daemon)", "created": len(todo)}


def transcript_jsonl(key: str, turns: list[dict], at: datetime) -> str:
    """Claude Code's transcript shape: one JSON object per line, user text as a string,
    assistant text as content blocks."""
    lines = []
    for i, turn in enumerate(turns):
        stamp = utc_iso(at + i * TURN_GAP)
        if turn["role"] == "user":
            message = {"role": "user", "content": turn["text"]}
        else:
            message = {"role": "assistant", "content": [{"type": "text", "text": turn["text"]}]}
        lines.append(json.dumps({"type": message["role"], "sessionId": key, "uuid": f"{key}-{i}",
                                 "timestamp": stamp, "cwd": CWD, "message": message}))
    return "\n".join(lines) + "\n"


def replay_chat(http: httpx.Client, chat: Chat) -> None:
    post(http, "/api/hooks/session-start", {"session_key": chat.key, "harness": "claude-code", "project": PROJECT,
                                             "cwd": CWD, "timestamp": utc_iso(chat.at)})
    for i, turn in enumerate(chat.turns):
        if turn["role"] == "user" and turn["text"].strip():
            post(http, "/api/hooks/user-prompt-submit", {"session_key": chat.key, "prompt": turn["text"],
                                                          "timestamp": utc_iso(chat.at + i * TURN_GAP)})
    end = chat.at + len(chat.turns) * TURN_GAP
    post(http, "/api/hooks/session-end", {"session_key": chat.key, "timestamp": utc_iso(end), "wait": True,
                                           "transcript": transcript_jsonl(chat.key, chat.turns, chat.at)}, timeout=1800)


def drain_pipeline(http: httpx.Client, limit_s: float) -> dict:
    began = time.monotonic()
    while True:
        totals = http.get("/api/pipeline/status", timeout=60).json()["queue"]["totals"]
        busy = totals.get("pending", 0) + totals.get("leased", 0)
        if not busy or time.monotonic() - began > limit_s:
            return {"waited_s": round(time.monotonic() - began, 1), "left": busy, "dead": totals.get("dead", 0)}
        time.sleep(2)


RULE_TYPES = ("constraint", "decision", "gotcha", "preference")


def session_origin(session_key: str | None) -> str:
    """Which kind of replayed session a memory was written in (issue 22)."""
    key = session_key or ""
    for prefix, name in (("decoy-", "decoy"), ("task-", "prompt"), ("chat-", "decision_chat")):
        if key.startswith(prefix):
            return name
    return "none" if not key else "other"


def unit_origin(units: frozenset[str]) -> str:
    """Where a shown memory came from, by its provenance units: a decoy chat, an earlier task
    session's prompt (a bug report), a decision chat, a planted decision / regression commit,
    an ordinary boltons commit, or nothing traceable."""
    for prefix, name in (("session:decoy-", "decoy"), ("session:task-", "prompt"), ("session:chat-", "decision_chat"),
                         ("decision:", "decision_commit"), ("cause:", "cause_commit"), ("commit:", "commit")):
        if any(u.startswith(prefix) for u in units):
            return name
    return "other"


def store_summary(http: httpx.Client, decoys: int = 0) -> dict:
    by_source: dict[str, int] = {}
    by_type: dict[str, int] = {}
    typed: dict[str, dict[str, int]] = {}  # origin -> {all, needs_review} of constraint/decision/gotcha/preference
    rules: dict[str, int] = {}  # extraction rule (metadata.claim.rule) of the typed ones
    offset, total = 0, None
    while total is None or offset < total:
        page = http.get("/api/memory", params={"project": PROJECT, "limit": 1000, "offset": offset}, timeout=120).json()
        total = page["total"]
        for m in page["items"]:
            by_source[m.get("source") or "-"] = by_source.get(m.get("source") or "-", 0) + 1
            by_type[m["type"]] = by_type.get(m["type"], 0) + 1
            if m["type"] in RULE_TYPES:
                row = typed.setdefault(session_origin(m.get("session_key")), {"all": 0, "needs_review": 0})
                row["all"] += 1
                row["needs_review"] += int(bool(m.get("needs_review")))
                rule = ((m.get("metadata") or {}).get("claim") or {}).get("rule") or "-"
                rules[rule] = rules.get(rule, 0) + 1
        offset += len(page["items"]) or total
    decoy = typed.get("decoy", {"all": 0, "needs_review": 0})
    return {"memories": total, "by_source": by_source, "by_type": by_type, "typed_by_origin": typed,
            "typed_by_rule": rules,
            "typed_per_decoy_chat": round(decoy["all"] / decoys, 3) if decoys else None,
            "typed_per_decoy_chat_not_in_review": round((decoy["all"] - decoy["needs_review"]) / decoys, 3)
            if decoys else None}


class Provenance:
    """Memory id -> the unit keys it came from (session, commit, or what it was derived from)."""

    def __init__(self, http: httpx.Client, sha_units: dict[str, str]) -> None:
        self.http = http
        self.sha_units = sha_units
        self.cache: dict[str, frozenset[str]] = {}
        self.kinds: dict[str, dict] = {}

    def units(self, memory_id: str, depth: int = 0) -> frozenset[str]:
        if memory_id in self.cache:
            return self.cache[memory_id]
        response = self.http.get(f"/api/memory/{memory_id}", timeout=60)
        found: set[str] = set()
        if response.status_code == 200:
            m = response.json()
            meta = m.get("metadata") or {}
            if m.get("session_key"):
                found.add(f"session:{m['session_key']}")
            if meta.get("sha"):
                found.add(self.sha_units.get(meta["sha"], f"commit:{meta['sha'][:10]}"))
            parents = []
            for name in ("derived_from", "source_ids", "sources"):
                for holder in (m, meta):
                    value = holder.get(name)
                    parents += value if isinstance(value, list) else []
            if meta.get("source_memory_id"):
                parents.append(meta["source_memory_id"])
            if depth < 4:
                for parent in parents:
                    if isinstance(parent, str) and parent != memory_id:
                        found |= self.units(parent, depth + 1)
        self.cache[memory_id] = frozenset(found)
        if response.status_code == 200:
            m = response.json()
            self.kinds[memory_id] = {"source": m.get("source"), "type": m.get("type"), "chars": len(m["content"])}
        return self.cache[memory_id]

    def describe(self, memory_id: str) -> dict:
        self.units(memory_id)
        return self.kinds.get(memory_id, {})


# -- scoring ------------------------------------------------------------------------------------------
def first_rank(ranked: list[frozenset[str]], units: set[str]) -> int | None:
    for i, got in enumerate(ranked):
        if got & units:
            return i + 1
    return None


def task_scores(task: Task, injected: list[frozenset[str]] | None, ranked: list[frozenset[str]]) -> dict:
    rank = first_rank(ranked[:K], task.gold)
    row = {"task": task.id, "source": task.source, "rank": rank,
           "hit@5": float(rank is not None and rank <= 5), "hit@10": float(rank is not None),
           "mrr@10": 1.0 / rank if rank else 0.0}
    # lenient: the decision from any task of the family (the twins share it, in one store)
    row["family_hit@10"] = float(first_rank(ranked[:K], task.family_gold) is not None)
    if injected is not None:
        row["injected"] = float(first_rank(injected, task.gold) is not None)
        row["family_injected"] = float(first_rank(injected, task.family_gold) is not None)
    if task.stale:
        for name, seq in (("recall", ranked[:K]), ("inject", injected)):
            if seq is None:
                continue
            later, stale = first_rank(seq, task.gold), first_rank(seq, task.stale)
            row[f"{name}_later_before_stale"] = float(later is not None and (stale is None or later < stale))
            row[f"{name}_stale_only"] = float(stale is not None and later is None)
    return row


def aggregate(rows: list[dict]) -> dict:
    out: dict = {}
    groups = {"overall": rows, **{s: [r for r in rows if r["source"] == s] for s in SOURCES}}
    for name, group in groups.items():
        if not group:
            continue
        keys = sorted({k for r in group for k, v in r.items() if isinstance(v, float)})
        out[name] = {"n": len(group), **{k: round(statistics.fmean(r[k] for r in group if k in r), 3)
                                          for k in keys if any(k in r for r in group)}}
    return out


def chars_summary(values: list[int]) -> dict:
    ordered = sorted(values)
    return {"median": statistics.median(ordered), "mean": round(statistics.fmean(ordered), 1), "max": ordered[-1],
            "over_8000": sum(v > 8000 for v in ordered)}


# -- arms ---------------------------------------------------------------------------------------------
def run_bm25(tasks: list[Task], chats: list[Chat], planted: list[PlantedCommit], commits: list[dict]) -> dict:
    docs, units = [], []
    for c in commits:
        docs.append(c["subject"] + "\n\n" + c["body"])
        units.append(frozenset({f"commit:{c['sha'][:10]}"}))
    for p in planted:
        docs.append(p.subject + "\n\n" + p.body)
        units.append(frozenset({p.key}))
    for chat in chats:
        for turn in chat.turns:
            docs.append(turn["text"])
            units.append(frozenset({f"session:{chat.key}"}))
    bm25 = ReferenceBM25(docs)
    rows = [task_scores(t, None, [units[i] for i in bm25.search(t.bug_report, K)]) for t in tasks if t.scorable]
    return {"units": len(docs), "rows": rows, "metrics": aggregate(rows)}


def run_kenning(name: str, config_yaml: str | None, tasks: list[Task], chats: list[Chat],
                planted: list[PlantedCommit], commits: list[dict], work: Path, args) -> dict:
    home = work / f"home-{name}"
    daemon, error = start_daemon(home, config_yaml)
    if daemon is None:
        return {"skipped": True, "reason": f"daemon refused the config {config_yaml!r}: {error}"}
    timings: dict[str, float] = {}
    try:
        with httpx.Client(base_url=daemon.url, timeout=600) as http:
            began = time.monotonic()
            repo = work / f"repo-{name}"
            sha_of = build_repo(repo, commits)
            texts = {sha_of[c["sha"]]: (c["subject"], c["body"], c["date"]) for c in commits}
            first = ingest_repo(http, repo, texts)
            timings["ingest_history_s"] = round(time.monotonic() - began, 1)
            sha_units = {sha_of[c["sha"]]: f"commit:{c['sha'][:10]}" for c in commits}
            began = time.monotonic()
            events = sorted([(c.at, "chat", c) for c in chats] + [(p.at, "commit", p) for p in planted],
                            key=lambda e: e[0])
            for _, kind, item in events:
                if kind == "commit":
                    item.sha = commit_planted(repo, item)
                    sha_units[item.sha] = item.key
                    texts[item.sha] = (item.subject, item.body, utc_iso(item.at))
                    ingest_repo(http, repo, texts)
                else:
                    replay_chat(http, item)
            timings["replay_s"] = round(time.monotonic() - began, 1)
            drained = drain_pipeline(http, args.drain_limit_s)
            prov = Provenance(http, sha_units)
            began = time.monotonic()
            now = datetime.now(timezone.utc)
            sessions, degraded, cut = {}, 0, {}
            for i, task in enumerate(tasks):
                key = f"task-{task.id}"
                at = utc_iso(now + timedelta(seconds=i))
                start = post(http, "/api/hooks/session-start", {"session_key": key, "harness": "claude-code",
                                                                "project": PROJECT, "cwd": CWD, "timestamp": at})
                prompt = post(http, "/api/hooks/user-prompt-submit", {"session_key": key, "prompt": task.bug_report,
                                                                      "timestamp": at})
                degraded += bool(start.get("degraded")) + bool(prompt.get("degraded"))
                stages = [*(f"start:{c}" for c in start.get("cut") or []), *(f"prompt:{c}" for c in prompt.get("cut") or [])]
                if stages:  # the hook's latency budget cut a stage (e.g. the prompt's hybrid recall)
                    cut[task.id] = stages
                sessions[task.id] = (start, prompt)
            timings["task_sessions_s"] = round(time.monotonic() - began, 1)
            began = time.monotonic()
            recalls = {t.id: post(http, "/api/memory/recall", {"query": t.bug_report, "limit": K,
                                                              "project": PROJECT})["results"] for t in tasks}
            timings["recall_s"] = round(time.monotonic() - began, 1)
            rows, chars = [], []
            for task in tasks:
                start, prompt = sessions[task.id]
                opening = {"start": len(start.get("inject") or ""), "prompt": len(prompt.get("inject") or "")}
                chars.append(opening["start"] + opening["prompt"])
                if not task.scorable:
                    continue
                shown = [("start", m) for m in start.get("memory_ids") or []] + \
                        [("prompt", m) for m in prompt.get("memory_ids") or []]
                injected = [prov.units(m) for _, m in shown]
                ranked = [prov.units(h["id"]) for h in recalls[task.id]]
                row = task_scores(task, injected, ranked)
                row["injected_count"] = len(injected)
                row["injected_chars"] = opening  # characters of session start's block and the first prompt's
                row["decision_memories_shown"] = [  # which memories carried the decision, and how
                    {"phase": phase, "id": m, **prov.describe(m)} for phase, m in shown if prov.units(m) & task.gold]
                rows.append(row)
            if getattr(args, "dump_candidates", None):
                dump_candidates(home, tasks, prov, args.dump_candidates)
            return {"skipped": False, "history_ingest": first, "pipeline_drain": drained, "timings_s": timings,
                    "degraded_hook_answers": degraded, "cut_hook_answers": cut,
                    "store": store_summary(http, sum(c.key.startswith("decoy-") for c in chats)),
                    "session_start_slots": slots_by_origin(sessions, prov, tasks),
                    "injected_chars": chars_summary(chars), "rows": rows, "metrics": aggregate(rows)}
    finally:
        daemon.stop()


def dump_candidates(home: Path, tasks: list[Task], prov: Provenance, path: Path) -> int:
    """The task sessions' prompt candidates (m023 `prompt_candidates`, issue 32) labelled needed when the memory
    carries the task's decision (strict units): the dev split's data for bench/fit_prompt_bar.py."""
    import sqlite3

    conn = sqlite3.connect(home / "memories.db")
    try:
        got = conn.execute("SELECT session_key, prompt_index, memory_id, recall_rank, probability, features, shown"
                           " FROM prompt_candidates WHERE session_key LIKE 'task-%'").fetchall()
        content = dict(conn.execute("SELECT id, content FROM memories").fetchall()) if got else {}
    except sqlite3.OperationalError:  # code without the prompt bar
        got, content = [], {}
    finally:
        conn.close()
    from kenning.sessions.prompt_bar import FEATURES, text_features

    gold = {f"task-{t.id}": t.gold for t in tasks if t.scorable}
    report = {f"task-{t.id}": t.bug_report for t in tasks}
    rows = []
    for k, i, m, rr, p, f, s in got:
        if k not in gold:
            continue
        features = json.loads(f)
        if set(FEATURES) - set(features):  # features added since the daemon started: computed as it does
            features.update(text_features(report[k], content.get(m, "")))
        rows.append({"session_key": k, "prompt_index": i, "memory_id": m, "recall_rank": rr, "probability": p,
                     "features": features, "shown": bool(s), "needed": bool(prov.units(m) & gold[k])})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return len(rows)


def slots_by_origin(sessions: dict, prov: Provenance, tasks: list[Task] | None = None) -> dict:
    """Session-start slots (memory ids the session-start hook injected, over all task sessions)
    by origin, as counts and shares (issue 22: decoy- and prompt-derived <= 10 %)."""
    counts: dict[str, int] = {}
    by_id = {t.id: t for t in tasks or []}
    every_gold = set().union(*(t.family_gold for t in tasks or []))
    other_task, per_task = 0, []  # issue 31: a slot holding another task family's decision (its area)
    for task_id, (start, _) in sessions.items():
        per_task.append(len(start.get("memory_ids") or []))
        for memory_id in start.get("memory_ids") or []:
            units = prov.units(memory_id)
            origin = unit_origin(units)
            counts[origin] = counts.get(origin, 0) + 1
            task = by_id.get(task_id)
            if task is not None and units & every_gold and not units & task.family_gold:
                other_task += 1
    total = sum(counts.values())
    shares = {k: round(v / total, 3) for k, v in sorted(counts.items())} if total else {}
    return {"slots": total, "per_task": round(total / len(sessions), 2) if sessions else 0, "counts": counts,
            "shares": shares, "decoy_or_prompt_share": round(shares.get("decoy", 0) + shares.get("prompt", 0), 3),
            "decision_share": round(shares.get("decision_chat", 0) + shares.get("decision_commit", 0), 3),
            "max_per_task": max(per_task, default=0), "other_task_area": other_task}


def targets(result: dict) -> dict:
    kd = result["arms"].get("default", {})
    bm = result["arms"]["bm25"]["metrics"]
    if kd.get("skipped", True):
        return {}
    m = kd["metrics"]
    amended = m.get("conversation-amended", {})
    return {
        "injected>=0.90": m["overall"].get("injected", 0) >= 0.90,
        "hit@10>=bm25_every_source": all(m.get(s, {}).get("hit@10", 0) >= bm.get(s, {}).get("hit@10", 0)
                                         for s in SOURCES if s in bm),
        "amended_later_before_stale>=0.80": amended.get("inject_later_before_stale", 0) >= 0.80
        and amended.get("recall_later_before_stale", 0) >= 0.80,
        "amended_stale_only==0": amended.get("inject_stale_only", 1) == 0 and amended.get("recall_stale_only", 1) == 0,
        "injected_chars<=8000": kd["injected_chars"]["over_8000"] == 0,
        "injected>=0.97 (issue 22)": m["overall"].get("injected", 0) >= 0.97,
        "typed_per_decoy_chat<=0.1 (issue 22)": (kd["store"].get("typed_per_decoy_chat") or 0) <= 0.1,
        "start_decoy_or_prompt<=0.10 (issue 22)": kd["session_start_slots"]["decoy_or_prompt_share"] <= 0.10,
    }


def kenning_origin() -> str:
    """Where `python -m kenning serve` imports kenning from (PYTHONPATH decides: a worktree, an export)."""
    done = subprocess.run([sys.executable, "-c", "import kenning, os; print(os.path.dirname(kenning.__file__))"],
                          capture_output=True, text=True)
    return done.stdout.strip() or done.stderr.strip()[-200:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="default: ../shared/bench/sde")
    parser.add_argument("--arms", default="default,episodes-off", help=f"kenning arms: {', '.join(ARMS)}")
    parser.add_argument("--decoys", type=int, default=None, help="use only the first N decoy chats (quick runs)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--drain-limit-s", type=float, default=1800.0, help="longest wait for the pipeline queue")
    parser.add_argument("--keep", action="store_true", help="keep the temp homes and repositories")
    parser.add_argument("--label", default="", help="what code is measured (e.g. 'before: ba4e5f8'), echoed in the JSON")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--dump-candidates", type=Path, default=None,
                        help="write the task prompts' candidates with their label (bench/fit_prompt_bar.py, issue 32)")
    args = parser.parse_args()
    args.data = args.data or default_data()
    now = datetime.now(timezone.utc)
    tasks, chats, planted, commits = load(args.data, args.decoys, args.seed, now)
    work = Path(tempfile.mkdtemp(prefix="kenning-bench-coding-"))
    git_rev = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
    result: dict = {
        "bench": "coding_memory", "label": args.label, "data": str(args.data), "seed": args.seed,
        "bench_commit": git_rev, "kenning_imported_from": kenning_origin(),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "tasks": len(tasks), "scored_tasks": sum(t.scorable for t in tasks),
        "unscorable": [t.id for t in tasks if not t.scorable],
        "chats": len(chats), "commits": len(commits) + len(planted), "arms": {},
    }
    result["arms"]["bm25"] = run_bm25(tasks, chats, planted, commits)
    for name in [a.strip() for a in args.arms.split(",") if a.strip()]:
        began = time.monotonic()
        result["arms"][name] = run_kenning(name, ARMS[name], tasks, chats, planted, commits, work, args)
        result["arms"][name]["wall_s"] = round(time.monotonic() - began, 1)
        print(json.dumps({name: result["arms"][name].get("metrics") or result["arms"][name]}), file=sys.stderr)
    result["targets"] = targets(result)
    text = json.dumps(result, indent=2, default=str)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    if not args.keep:
        subprocess.run(["rm", "-rf", str(work)], check=False)


if __name__ == "__main__":
    main()
