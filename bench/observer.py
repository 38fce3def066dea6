"""Observer benchmark: planted regularities in scripted Claude Code sessions, replayed through a real daemon.

    .venv/bin/python bench/observer.py --out /tmp/observer.json
    .venv/bin/python bench/observer.py --background 2000 --sessions 12   # quick look

Traces are modelled on Claude Code sessions (Read/Edit/MultiEdit/Write/Bash/Grep/Glob/Task/
WebSearch tool calls with Claude Code's tool_input / tool_response shapes). Three projects each
have four planted regularities, each present in a random ~45% of that project's sessions:
- **error**: a test command fails with the same error (ids and line numbers vary), fixed by
  editing one migration file; before running it the agent reads the module the error names;
- **dead_end**: the agent edits a file towards an approach, says it will not work, reverts it;
- **cochange**: two files (backend schema, frontend types) are always edited together;
- **search**: the same Grep is run twice around reading the file that answers it.
Every session also carries noise (random reads, edits, greps, passing commands, a unique
error now and then); some sessions are noise only, and a fourth project has noise only.

Replay: PostToolUse events go through `kenning.hooks.claude_code.handle` (the hook client's
code, over HTTP to a real `kenning serve`), reasoning through POST /api/observe (a harness
with a reasoning stream), session end through POST /api/hooks/session-end {wait: true}. The
store first holds `--background` memories in other projects that name the same file paths
(so the decider's index is at that size). Reported:
- promotion precision (promoted observer memories matching a planted regularity) and recall
  (planted regularities promoted), noise promotions (memories all of whose supporting
  sessions are noise-only);
- step-injection precision (step injections of observer-promoted memories whose memory is the
  planted regularity of the file, search or error at that step; injections of the background
  memories are counted apart) and the share of planted repeats, after the regularity was
  promoted, where the agent was told before repeating the mistake: at session start / a prompt
  or at an earlier step (`told_before_repeat_share`), and at a step only
  (`told_at_a_step_before_repeat_share`; a memory shown at session start is not shown again);
- latency: observe() in-process p50/p95 per event (the real scratchpad, same traces), the
  post-tool-use HTTP answer p50/p95 (client-side), the step decision p95 as the daemon
  measured it, and GET /api/health as the HTTP floor in the same run.
Baseline in the same run: the same replay with `observer.step_injection: false` (nothing is
told; promotion identical), on a second daemon.
Targets (issue 14): promotion precision >= 0.8, recall >= 0.7, step-injection precision >= 0.8,
zero noise promotions; observe() p95 <= 2 ms; post-tool-use p95 <= 30 ms; decision p95 <= 50 ms at 10k.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from kenning.hooks.claude_code import handle
from kenning.observer.scratchpad import Scratchpad

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.harnesses.daemon import DaemonProcess  # noqa: E402  (the one daemon starter of benches and tests)
from bench.harnesses.daemon import start_daemon as start_kenning_daemon  # noqa: E402

PROJECTS = {
    "shop": {
        "root": "/home/dev/shop", "ext": "py",
        "error": {"cmd": "pytest tests/test_orders.py", "read": "src/shop/orders.py",
                  "fix": "migrations/0042_add_discount.py", "text": (
                      "FAILED tests/test_orders.py::test_total - sqlalchemy.exc.OperationalError\n"
                      "Traceback (most recent call last):\n  File \"{root}/src/shop/orders.py\", line {n}, in total\n"
                      "sqlalchemy.exc.OperationalError: (sqlite3.OperationalError) no such column: "
                      "orders.discount_cents [SQL: SELECT * FROM orders WHERE id = {id}]")},
        "dead_end": {"file": "src/shop/cache.py", "say": "This approach won't work: redis is unavailable in CI, "
                     "so mocking the cache client at import time breaks the fixtures."},
        "cochange": ("src/shop/api/schema.py", "web/src/types.ts"),
        "search": {"pattern": "def apply_discount", "answer": "src/shop/pricing/rules.py"},
    },
    "webapp": {
        "root": "/home/dev/webapp", "ext": "ts",
        "error": {"cmd": "npm run test -- auth", "read": "src/auth/session.ts", "fix": "src/auth/cookies.ts",
                  "text": ("FAIL src/auth/session.test.ts\n  TypeError: Cannot read properties of undefined "
                           "(reading 'sameSite')\n      at setCookie ({root}/src/auth/session.ts:{n}:{id})")},
        "dead_end": {"file": "src/store/index.ts", "say": "Let me try a different approach: moving the store to "
                     "a React context causes re-render storms, this approach won't work."},
        "cochange": ("src/api/routes.ts", "src/api/client.ts"),
        "search": {"pattern": "useFeatureFlag", "answer": "src/flags/useFeatureFlag.ts"},
    },
    "infra": {
        "root": "/home/dev/infra", "ext": "go",
        "error": {"cmd": "go test ./internal/deploy/...", "read": "internal/deploy/plan_test.go",
                  "fix": "internal/deploy/quota.go", "text": (
                      "--- FAIL: TestPlanApply ({n}.02s)\n    internal/deploy/plan_test.go:{id}: error: quota exceeded for "
                      "region eu-west-{n}: requested {id} vCPU\nFAIL\tgithub.com/acme/infra/internal/deploy")},
        "dead_end": {"file": "internal/k8s/client.go", "say": "I need to abandon this: the fake clientset is not "
                     "available in this environment, so stubbing the dynamic client does not help."},
        "cochange": ("internal/config/schema.go", "deploy/values.yaml"),
        "search": {"pattern": "func NewReconciler", "answer": "internal/controller/reconciler.go"},
    },
    "scratch": {"root": "/home/dev/scratch", "ext": "py"},  # noise-only project
}
REGULARITIES = ("error", "dead_end", "cochange", "search")
NOISE_WORDS = ["handler", "parser", "util", "models", "views", "service", "client", "config", "worker", "queue",
               "cli", "report", "export", "auth", "billing", "search", "index", "cache", "events", "metrics"]
NOISE_TALK = ["Let me look at how this is wired.", "Now I'll update the caller.", "The tests cover this path.",
              "I'll check the related module next.", "That matches the expected output."]


@dataclass
class Step:
    tool: str
    tool_input: dict
    response: object = None
    reasoning: str | None = None  # a reasoning event instead of a tool call
    tag: str | None = None  # planted regularity this step belongs to
    mistake: bool = False  # the step that repeats the planted mistake


@dataclass
class Session:
    key: str
    project: str
    planted: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)


def noise_files(project: str) -> list[str]:
    ext = PROJECTS[project]["ext"]
    return [f"src/{a}/{b}.{ext}" for a in NOISE_WORDS[:6] for b in NOISE_WORDS[6:11]]


def noise_steps(rng: random.Random, project: str, n: int, tag: str) -> list[Step]:
    root = PROJECTS[project]["root"]
    files = noise_files(project)
    out: list[Step] = []
    for _ in range(n):
        kind = rng.random()
        path = f"{root}/{rng.choice(files)}"
        if kind < 0.35:
            out.append(Step("Read", {"file_path": path}, {"type": "text", "file": {"filePath": path}}))
        elif kind < 0.55:
            a, b = rng.randrange(10**6), rng.randrange(10**6)
            out.append(Step("Edit", {"file_path": path, "old_string": f"v{a}", "new_string": f"v{b}"},
                            {"filePath": path}))
        elif kind < 0.68:
            out.append(Step("Grep", {"pattern": f"{rng.choice(NOISE_WORDS)}_{rng.randrange(10**5)}"},
                            {"filenames": [path], "numFiles": 1}))
        elif kind < 0.82:
            cmd = rng.choice(["pytest -q", "git status", "git diff --stat", "ruff check .", "make build"])
            out.append(Step("Bash", {"command": cmd}, {"stdout": "ok", "stderr": "", "interrupted": False}))
        elif kind < 0.87:
            word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))
            out.append(Step("Bash", {"command": f"python -m {word}"},
                            {"stdout": "", "stderr": f"ModuleNotFoundError: No module named '{word}x'",
                             "interrupted": False}))
            out.append(Step("Bash", {"command": f"python -m {word}"}, {"stdout": "done", "stderr": ""}))
        elif kind < 0.92:
            out.append(Step("Glob", {"pattern": f"src/{rng.choice(NOISE_WORDS[:6])}/*"},
                            {"filenames": [f"{root}/{f}" for f in rng.sample(files, 3)]}))
        elif kind < 0.96:
            out.append(Step("Task", {"description": "explore", "prompt": "find where X is configured"}, "found it"))
        else:
            out.append(Step("", {}, reasoning=rng.choice(NOISE_TALK)))
    for step in out:
        step.tag = tag
    return out


def planted_steps(rng: random.Random, project: str, name: str) -> list[Step]:
    p = PROJECTS[project]
    root = p["root"]
    if name == "error":
        e = p["error"]
        fail = e["text"].format(root=root, n=rng.randrange(10, 400), id=rng.randrange(1000, 99999))
        return [
            Step("Read", {"file_path": f"{root}/{e['read']}"}, {"type": "text"}, tag=name),
            Step("Bash", {"command": e["cmd"]}, {"stdout": fail, "stderr": "", "interrupted": False}, tag=name,
                 mistake=True),
            Step("Read", {"file_path": f"{root}/{e['fix']}"}, {"type": "text"}, tag=name),
            Step("Edit", {"file_path": f"{root}/{e['fix']}", "old_string": f"x{rng.randrange(999)}",
                          "new_string": f"y{rng.randrange(999)}"}, {"filePath": f"{root}/{e['fix']}"}, tag=name),
            Step("Bash", {"command": e["cmd"]}, {"stdout": "12 passed", "stderr": ""}, tag=name),
        ]
    if name == "dead_end":
        d = p["dead_end"]
        path = f"{root}/{d['file']}"
        old, new = f"client = connect({rng.randrange(99)})", "client = MagicMock()"
        return [
            Step("Read", {"file_path": path}, {"type": "text"}, tag=name),
            Step("Edit", {"file_path": path, "old_string": old, "new_string": new}, {"filePath": path}, tag=name,
                 mistake=True),
            Step("Bash", {"command": "make test"}, {"stdout": "3 failed", "stderr": ""}, tag=name),
            Step("", {}, reasoning=d["say"], tag=name),
            Step("Edit", {"file_path": path, "old_string": new, "new_string": old}, {"filePath": path}, tag=name),
        ]
    if name == "cochange":
        a, b = p["cochange"]
        return [
            Step("Read", {"file_path": f"{root}/{a}"}, {"type": "text"}, tag=name),
            Step("Edit", {"file_path": f"{root}/{a}", "old_string": f"f{rng.randrange(999)}", "new_string": "g"},
                 {"filePath": f"{root}/{a}"}, tag=name, mistake=True),
            Step("Edit", {"file_path": f"{root}/{b}", "old_string": f"f{rng.randrange(999)}", "new_string": "g"},
                 {"filePath": f"{root}/{b}"}, tag=name),
        ]
    s = p["search"]
    return [
        Step("Grep", {"pattern": s["pattern"]}, {"filenames": [], "numFiles": 0}, tag=name),
        Step("Read", {"file_path": f"{root}/{s['answer']}"}, {"type": "text"}, tag=name),
        Step("Grep", {"pattern": s["pattern"], "path": f"{root}/src"},
             {"filenames": [f"{root}/{s['answer']}"], "numFiles": 1}, tag=name, mistake=True),
    ]


def build_sessions(per_project: int, noise_only_project: int, seed: int) -> list[Session]:
    rng = random.Random(seed)
    sessions: list[Session] = []
    for project in ("shop", "webapp", "infra"):
        for i in range(per_project):
            s = Session(f"{project}-{i:02d}", project)
            noise_only = i % 5 == 4
            if not noise_only:
                s.planted = [r for r in REGULARITIES if rng.random() < 0.45] or [rng.choice(REGULARITIES)]
            blocks = [noise_steps(rng, project, rng.randint(3, 8), "noise")]
            for name in s.planted:
                blocks.append(planted_steps(rng, project, name))
                blocks.append(noise_steps(rng, project, rng.randint(2, 5), "noise"))
            s.steps = [step for block in blocks for step in block]
            sessions.append(s)
    for i in range(noise_only_project):
        s = Session(f"scratch-{i:02d}", "scratch")
        s.steps = noise_steps(rng, "scratch", rng.randint(10, 25), "noise")
        sessions.append(s)
    rng.shuffle(sessions)  # projects interleave like a week of work; per-project order stays random
    return sessions


# -- daemon --------------------------------------------------------------------------------------------
def observer_daemon(home: Path, step_injection: bool) -> DaemonProcess:
    """A daemon for the replay (bench.harnesses.daemon.start_daemon): extraction off, step injection on or off."""
    return start_kenning_daemon(home, "pipeline:\n  enabled: false\n  embedding_tracker:\n    enabled: false\n"
                        f"observer:\n  step_injection: {'true' if step_injection else 'false'}\n"
                        "  synthesis_thresholds: [5, 10, 20, 50, 100]\n", log_name="daemon.log", timeout_s=300)


def start_daemon(home: Path, step_injection: bool) -> tuple[subprocess.Popen[bytes], str, dict[str, str]]:
    """(process, URL, environment) of `observer_daemon`, as bench/observer_real_cli.py takes them."""
    daemon = observer_daemon(home, step_injection)
    return daemon.proc, daemon.base_url, daemon.env


def load_background(home: Path, count: int, seed: int) -> float:
    """`count` memories already in the store before the replay: three quarters in the planted projects
    (about their noise files, so session-start injection has real competition), a quarter in other
    projects naming the same paths (so the decider's file index holds them too). Inserted through the
    store's insert_memory in one transaction, without vectors (the decider needs none; the embedding
    tracker is off in this bench) so the run takes minutes on a shared machine."""
    from kenning.core.types import MemoryDraft
    from kenning.store.db import open_database
    from kenning.store.memories import insert_memory

    rng = random.Random(seed)
    types = ["gotcha", "error_pattern", "dead_end", "fact", "decision", "causal_dependency", "module_insight"]
    planted = ("shop", "webapp", "infra")
    paths = [f for p in PROJECTS for f in noise_files(p)]
    for p in planted:
        cfg = PROJECTS[p]
        paths += [cfg["error"]["read"], cfg["error"]["fix"], cfg["dead_end"]["file"], *cfg["cochange"]]
    began = time.perf_counter()
    db = open_database(home / "memories.db")
    with db.with_write_tx() as conn:
        for i in range(count):
            if i % 4 < 3:
                project = planted[i % 4]
                files = rng.sample(noise_files(project), 2)
            else:
                project, files = f"bg-{i % 40}", rng.sample(paths, 2)
            draft = MemoryDraft(
                content=f"Background note {i} about {files[0]}: {rng.choice(NOISE_TALK)} "
                        f"({rng.choice(NOISE_WORDS)} {rng.randrange(10**6)})",
                type=rng.choice(types), project=project, importance=round(rng.uniform(0.05, 0.95), 2),
                confidence=round(rng.uniform(0.5, 0.95), 2), related_files=files, source="bench-background")
            insert_memory(conn, draft)
    db.close()
    return round(count / max(1e-9, time.perf_counter() - began), 1)


# -- replay ------------------------------------------------------------------------------------------------
def replay(url: str, env: dict, sessions: list[Session]) -> dict:
    hook_env = {"KENNING_URL": url, "KENNING_HOME": env["KENNING_HOME"], "KENNING_HOOK_TIMEOUT": "10"}
    post_ms: list[float] = []
    health_ms: list[float] = []
    log: list[dict] = []
    with httpx.Client(base_url=url, timeout=120) as http:
        for s in sessions:
            root = PROJECTS[s.project]["root"]
            http.post("/api/hooks/session-start", json={"session_key": s.key, "harness": "claude-code",
                                                        "project": s.project, "cwd": root}).raise_for_status()
            for index, step in enumerate(s.steps):
                if step.reasoning is not None:
                    http.post("/api/observe", json={"session_key": s.key, "type": "reasoning",
                                                    "text": step.reasoning, "cwd": root}).raise_for_status()
                    continue
                payload = {"session_id": s.key, "cwd": root, "hook_event_name": "PostToolUse",
                           "transcript_path": f"/tmp/{s.key}.jsonl", "tool_name": step.tool,
                           "tool_input": step.tool_input, "tool_response": step.response}
                began = time.perf_counter()
                out = handle("post-tool-use", json.dumps(payload), hook_env)
                post_ms.append((time.perf_counter() - began) * 1000)
                if out:
                    text = json.loads(out)["hookSpecificOutput"]["additionalContext"]
                    ids = [part.split(")")[0] for part in text.split("(id ")[1:]]
                    log.append({"session": s.key, "index": index, "ids": ids})
            began = time.perf_counter()
            http.get("/api/health")
            health_ms.append((time.perf_counter() - began) * 1000)
            http.post("/api/hooks/session-end", json={"session_key": s.key, "wait": True}).raise_for_status()
            detail = http.get(f"/api/sessions/{s.key}").json()
            early = [m["memory_id"] for m in detail["memories"]
                     if m["was_injected"] and m.get("inject_phase") and m["inject_phase"] != "step"]
            if early:
                log.append({"session": s.key, "index": -1, "ids": early, "phase": "start"})
        status = http.get("/api/observer/status").json()
        memories = []
        for project in PROJECTS:
            memories += http.get("/api/memory", params={"project": project, "tag": "observer", "limit": 1000}).json()["items"]
    return {"post_ms": post_ms, "health_ms": health_ms, "injections": log, "status": status, "memories": memories}


# -- scoring -------------------------------------------------------------------------------------------------
def regularity_of(memory: dict) -> tuple[str, str] | None:
    """(project, regularity) a promoted memory captures, or None when it matches nothing planted."""
    project = memory.get("project")
    cfg = PROJECTS.get(project, {})
    if "error" not in cfg:
        return None
    obs = memory.get("metadata", {}).get("observer", {})
    cls, key = obs.get("signal_class"), obs.get("key", "")
    files = set(memory.get("related_files") or [])
    if cls == "error_retry" and cfg["error"]["fix"] in files:
        return project, "error"
    if cls in ("dead_end", "backtrack", "self_correction") and cfg["dead_end"]["file"] in files:
        return project, "dead_end"
    if cls in ("co_access", "config_touch") and set(cfg["cochange"]) <= files:
        return project, "cochange"
    if cls in ("repeated_grep", "glob_ignore") and key == cfg["search"]["pattern"]:
        return project, "search"
    return None


def step_target(session: Session, step: Step) -> tuple[str, str] | None:
    return (session.project, step.tag) if step.tag in REGULARITIES else None


def score(sessions: list[Session], run: dict) -> dict:
    by_key = {s.key: s for s in sessions}
    noise_only = {s.key for s in sessions if not s.planted}
    memories = run["memories"]
    matched = {m["id"]: regularity_of(m) for m in memories}
    planted = {(s.project, r) for s in sessions for r in s.planted}
    found = {v for v in matched.values() if v}
    noise_promotions = [m["id"] for m in memories
                        if set(m.get("metadata", {}).get("supporting_sessions") or []) <= noise_only]
    # step injections
    shown, right, other = 0, 0, 0
    told_at: dict[tuple[str, tuple[str, str]], int] = {}
    told_at_step: dict[tuple[str, tuple[str, str]], int] = {}
    for entry in run["injections"]:
        session = by_key[entry["session"]]
        for memory_id in entry["ids"]:
            target = matched.get(memory_id)
            if target is not None and target[0] == session.project:
                told_at[(session.key, target)] = min(told_at.get((session.key, target), 10**9), entry["index"])
            if entry["index"] < 0:
                continue  # session-start / prompt injection, not a step
            if memory_id not in matched:
                other += 1  # a memory the observer did not promote (background)
                continue
            shown += 1
            step = session.steps[entry["index"]]
            if target is not None and target == step_target(session, step):
                right += 1
            if target is not None and target[0] == session.project:
                told_at_step.setdefault((session.key, target), entry["index"])
    # planted repeats after the regularity was promoted: told at or before the mistake step?
    order = {s.key: i for i, s in enumerate(sessions)}
    promoted_after: dict[tuple[str, str], int] = {}
    for m in memories:
        if matched[m["id"]] and m.get("session_key") in order:
            target = matched[m["id"]]
            promoted_after[target] = min(promoted_after.get(target, 10**9), order[m["session_key"]])
    repeats, told, told_step = 0, 0, 0
    per_kind: dict[str, list[int]] = {r: [0, 0, 0] for r in REGULARITIES}
    for s in sessions:
        for r in s.planted:
            target = (s.project, r)
            if target not in promoted_after or order[s.key] <= promoted_after[target]:
                continue
            mistake = next(i for i, st in enumerate(s.steps) if st.tag == r and st.mistake)
            repeats += 1
            per_kind[r][0] += 1
            if told_at.get((s.key, target), 10**9) <= mistake:
                told += 1
                per_kind[r][1] += 1
            if told_at_step.get((s.key, target), 10**9) <= mistake:
                told_step += 1
                per_kind[r][2] += 1
    return {
        "promoted": len(memories), "matching": sum(1 for v in matched.values() if v),
        "promotion_precision": round(sum(1 for v in matched.values() if v) / len(memories), 3) if memories else None,
        "planted_regularities": len(planted), "regularities_promoted": len(found & planted),
        "promotion_recall": round(len(found & planted) / len(planted), 3) if planted else None,
        "missed": sorted(f"{p}:{r}" for p, r in planted - found),
        "noise_promotions": len(noise_promotions),
        "false_promotions": [{"type": m["type"], "class": m["metadata"].get("observer", {}).get("signal_class"),
                              "content": m["content"][:160]} for m in memories if not matched[m["id"]]][:10],
        "step_injections": shown, "step_injections_right": right, "step_injections_of_other_memories": other,
        "step_injection_precision": round(right / shown, 3) if shown else None,
        "planted_repeats_after_promotion": repeats, "told_before_repeat": told,
        "told_before_repeat_share": round(told / repeats, 3) if repeats else None,
        "told_at_a_step_before_repeat": told_step,
        "told_at_a_step_before_repeat_share": round(told_step / repeats, 3) if repeats else None,
        "told_by_regularity": {r: {"repeats": a, "told": b, "told_at_step": c} for r, (a, b, c) in per_kind.items()},
    }


def pct(values: list[float], q: float) -> float | None:
    data = sorted(values)
    return round(data[min(len(data) - 1, int(round(q * (len(data) - 1))))], 3) if data else None


def lat(values: list[float]) -> dict:
    return {"n": len(values), "p50": pct(values, 0.5), "p95": pct(values, 0.95), "p99": pct(values, 0.99),
            "mean": round(statistics.fmean(values), 3) if values else None}


def observe_latency(sessions: list[Session], rounds: int) -> dict:
    """observe() in-process: the real scratchpad fed the same traces (tool call + result per event)."""
    times: list[float] = []
    for _ in range(rounds):
        for s in sessions:
            pad = Scratchpad(s.key, project=s.project, cwd=PROJECTS[s.project]["root"])
            for step in s.steps:
                began = time.perf_counter()
                if step.reasoning is not None:
                    pad.on_reasoning(step.reasoning)
                else:
                    ctx = pad.on_tool_call(step.tool, step.tool_input)
                    text = json.dumps(step.response) if not isinstance(step.response, str) else step.response
                    pad.on_tool_result(step.tool, step.tool_input, text, "Error" in text or "FAIL" in text, ctx)
                times.append((time.perf_counter() - began) * 1000)
            pad.finalize()
    return lat(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=17, help="sessions per planted project (3 projects)")
    parser.add_argument("--noise-project", type=int, default=8, help="sessions of the noise-only project")
    parser.add_argument("--background", type=int, default=10_000, help="memories already in the store")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--no-baseline", action="store_true", help="skip the step_injection=false replay")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    sessions = build_sessions(args.sessions, args.noise_project, args.seed)
    result: dict = {
        "bench": "observer", "python": platform.python_version(), "cpus": os.cpu_count(),
        "sessions": len(sessions), "noise_only_sessions": sum(1 for s in sessions if not s.planted),
        "events": sum(len(s.steps) for s in sessions), "background_memories": args.background,
        "observe_in_process_ms": observe_latency(sessions, 3),
    }
    runs = [("observer", True)] + ([] if args.no_baseline else [("baseline_no_step_injection", False)])
    with tempfile.TemporaryDirectory(prefix="kenning-observer-bench-") as tmp:
        for name, step_injection in runs:
            home = Path(tmp) / name
            home.mkdir(parents=True)
            rate = load_background(home, args.background, args.seed) if args.background else None
            daemon = observer_daemon(home, step_injection)
            try:
                run = replay(daemon.base_url, daemon.env, sessions)
            finally:
                daemon.stop()
            result[name] = {
                **score(sessions, run), "background_load_per_s": rate,
                "post_tool_use_http_ms": lat(run["post_ms"]), "health_http_ms": lat(run["health_ms"]),
                "decide_ms_p95_daemon": run["status"].get("decide_ms_p95"),
                "observe_ms_p95_daemon": run["status"].get("observe_ms_p95"),
            }
            print(json.dumps({name: result[name]}, indent=1), file=sys.stderr)
    main_run = result["observer"]
    result["targets"] = {
        "promotion_precision>=0.8": (main_run["promotion_precision"] or 0) >= 0.8,
        "promotion_recall>=0.7": (main_run["promotion_recall"] or 0) >= 0.7,
        "step_injection_precision>=0.8": (main_run["step_injection_precision"] or 0) >= 0.8,
        "noise_promotions==0": main_run["noise_promotions"] == 0,
        "observe_p95<=2ms": (result["observe_in_process_ms"]["p95"] or 99) <= 2,
        "post_tool_use_http_p95<=30ms": (main_run["post_tool_use_http_ms"]["p95"] or 999) <= 30,
        "decide_p95<=50ms": (main_run["decide_ms_p95_daemon"] or 999) <= 50,
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
