"""Coding memory through the real harness CLIs (issue 23): bench/coding_memory.py's replay, but every
chat is one headless session of a real agent CLI and every task question one real headless run.

    .venv/bin/python bench/real_harness.py --decoys 10 --out /tmp/real_harness.json
    .venv/bin/python bench/real_harness.py --decoys 20 --baseline   # + coding_memory's hook replay, same run
    .venv/bin/python bench/real_harness.py --harness codex --decoys 5 --baseline   # smaller replays:
    .venv/bin/python bench/real_harness.py --harness gemini --decoys 5 --tasks 12  # codex | gemini | opencode | copilot

Data and timeline: bench/coding_memory.py (sde-bench development split in ../shared/bench/sde, read in
place); `--tasks N` keeps N tasks (in turn from each source) and only their own chats and planted
commits, `--decoys N` the first N decoy chats; every arm of a run (BM25, the harness, `--baseline`)
gets the same subset. The harness (`--harness`, default claude-code): the pinned npm version
(bench/harnesses/clis.py), its HOME a temp folder, hooks installed by `kenning connect <harness>`, its
model calls sent to a scripted local server speaking its protocol that answers each user turn with
the chat's own assistant turns. How each CLI is driven, and how a multi-turn chat is fed to CLIs that
take one prompt per headless run (one resumed run per user turn): bench/real_harness_drivers.py.

1. the boltons history is a real git repository ingested as in coding_memory (POST /api/ingest/git);
   the repository folder is the sessions' working directory, so the hooks name the project `boltons`
   the way they would for a user;
2. chats and planted commits in timeline order: a commit is committed and ingested; a chat is one
   session of the harness. The hooks do everything: session start, each prompt, turn end, session end
   with the harness's own transcript. Chats run now, in order (the hooks carry no replay timestamps):
   memories from chats are dated today, commits at their dates. Codex has no session-end event: its
   sessions end once idle after their last turn (the bench's daemon: 30 s instead of 30 min), and
   the bench waits for that before going on;
3. the pipeline queue is drained; per task one headless run with the bug report as the prompt: the
   memories that reached the model are the `[id]`s in kenning's blocks of the first model request
   (Claude Code: the SessionStart / UserPromptSubmit hook contexts; Codex: developer messages;
   Gemini CLI: the hook contexts in the user turn; OpenCode: the system prompt; Copilot CLI: session
   start's own user message and the `<system_reminder>` of the user turn);
4. recall per task as in coding_memory (POST /api/memory/recall), before step 3's sessions: they end
   and their episodes would hold the bug report itself (coding_memory's task sessions never end). Step 3's
   first prompts do meet the earlier tasks' episodes ("User: <bug report> Assistant: I will look at it."),
   which share the split's bug-report template; `--forget-task-sessions` forgets each one once it ended,
   so a task's first prompt meets the store the chats left (issue 31: how the real CLI differs from the
   hook replay). `--keep` keeps the store: its prompt_candidates (recall rank, probability, shown) and
   session_memories rows per task session say what each first prompt was offered and showed.

Reported: coding_memory's metrics (decision injected, recall hit@5/10, MRR@10, amended), plus
`session_start_slots` (Claude Code: the memory ids of the SessionStart block per task, by origin, with
`other_task_area`: slots holding another task family's decision, issue 31), `harness_text_stored`
(memories and every table but the raw transcript holding a harness marker:
system-reminder, gitStatus, kenning's own blocks, hook contexts, Claude Code's attribution reminder,
Codex's environment context / AGENTS.md, the CLIs' system prompts), `first_exchanges` (the episode
holding each chat's first prompt holds the first answer too), and the CLI version. `--baseline` runs
coding_memory's default arm on the same data in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
import coding_memory as cm  # noqa: E402
from real_harness_drivers import DRIVERS, Driver  # noqa: E402
from bench.harnesses.clis import version  # noqa: E402
from bench.harnesses.kenning_setup import HARNESS_MARKERS as OTHER_HARNESS_MARKERS  # noqa: E402

# Claude Code's harness text, kenning's own blocks, and the other harnesses' (bench/harnesses/kenning_setup.py)
HARNESS_MARKERS = tuple(dict.fromkeys(("system-reminder", "gitStatus", "<kenning-memories", "<memory-feedback",
                                       "hook additional context", "hook_context", "Attribution for git commits",
                                       *OTHER_HARNESS_MARKERS)))
_ID = re.compile(r"\[([0-9a-f]{16})\]")


def exchanges(turns: list[dict]) -> list[tuple[str, str]]:
    """(user text, the assistant turns after it joined) for each user turn; leading assistant turns dropped."""
    out: list[tuple[str, list[str]]] = []
    for turn in turns:
        text = (turn.get("text") or "").strip()
        if not text:
            continue
        if turn["role"] == "user":
            out.append((text, []))
        elif out:
            out[-1][1].append(text)
    return [(user, "\n\n".join(answers) or "OK.") for user, answers in out]


_START_CONTEXT = re.compile(r"SessionStart hook additional context: (.*?</kenning-[a-z-]+>)", re.DOTALL)  # Claude Code


def shown_ids(blocks: list[str]) -> list[str]:
    """The memory ids kenning's blocks put in one model request, in order (start first)."""
    ids: list[str] = []
    for block in blocks:
        ids += [i for i in _ID.findall(block) if i not in ids]
    return ids


def norm(text: str, n: int = 40) -> str:
    return " ".join(text.split())[:n]


class RealProvenance(cm.Provenance):
    """coding_memory's provenance, with Claude Code's session ids read back as the chat keys."""

    def __init__(self, http: httpx.Client, sha_units: dict[str, str], keys: dict[str, str]) -> None:
        super().__init__(http, sha_units)
        self.keys = keys

    def units(self, memory_id: str, depth: int = 0) -> frozenset[str]:
        got = super().units(memory_id, depth)
        mapped = frozenset(f"session:{self.keys[u[8:]]}" if u.startswith("session:") and u[8:] in self.keys else u
                           for u in got)
        self.cache[memory_id] = mapped
        return mapped


def harness_text_stored(db_path: Path, http: httpx.Client) -> dict:
    tables: dict[str, int] = {}
    with sqlite3.connect(db_path) as db:
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
            if table == "session_transcripts" or table.startswith("sqlite_"):
                continue
            try:
                rows = db.execute(f'SELECT * FROM "{table}"').fetchall()
            except sqlite3.DatabaseError:
                continue
            hits = sum(any(m in json.dumps(r, default=str) for m in HARNESS_MARKERS) for r in rows)
            if hits:
                tables[table] = hits
    memories, offset, total = 0, 0, None
    while total is None or offset < total:
        page = http.get("/api/memory", params={"limit": 1000, "offset": offset}, timeout=120).json()
        total = page["total"]
        memories += sum(any(m in item["content"] for m in HARNESS_MARKERS) for item in page["items"])
        offset += len(page["items"]) or total
    return {"memories": memories, "rows_by_table": tables}


def first_exchange_complete(http: httpx.Client, replayed: list[dict]) -> dict:
    """Per replayed chat: the episode holding its first prompt also holds the first answer (complete),
    or holds the prompt alone (incomplete: the bug the issue names), or no episode holds it (not stored:
    e.g. dropped as a repeat of an existing memory)."""
    complete, incomplete, absent = 0, [], []
    for chat in replayed:
        if "session" not in chat:
            continue
        created = http.get(f"/api/sessions/{chat['session']}", timeout=60).json().get("created") or []
        user, answer = chat["first"]
        holding = [" ".join(m["content"].split()) for m in created
                   if m["type"] == "episode" and norm(user) in " ".join(m["content"].split())]
        if not holding:
            absent.append(chat["key"])
        elif any(norm(answer) in text for text in holding):
            complete += 1
        else:
            incomplete.append(chat["key"])
    n = complete + len(incomplete)
    return {"sessions": sum("session" in c for c in replayed), "stored": n, "complete": complete,
            "rate": round(complete / n, 3) if n else None, "incomplete": incomplete[:20],
            "first_prompt_not_stored": absent[:20]}


def forget_session(http: httpx.Client, session: str, drain_limit_s: float) -> int:
    """`--forget-task-sessions`: once a task session has ended and its summary job ran, forget what it stored (its
    episode holds the bug report and the scripted answer), so the next task's first prompt meets the store the chats
    left, as coding_memory's task sessions (which never end) do. Returns how many memories were forgotten."""
    cm.drain_pipeline(http, drain_limit_s)
    items = http.get("/api/memory", params={"session_key": session, "limit": 1000}, timeout=60).json()["items"]
    for item in items:
        http.delete(f"/api/memory/{item['id']}", params={"reason": "real_harness --forget-task-sessions"}, timeout=60)
    return len(items)


def run_real(driver: Driver, tasks, chats, planted, commits, work: Path, args) -> dict:
    daemon, error = cm.start_daemon(work / f"home-{driver.name}", driver.daemon_config())
    if daemon is None:
        return {"skipped": True, "reason": error}
    timings: dict[str, float] = {}
    try:
        try:
            driver.connect(daemon.home, daemon.port)
        except (AssertionError, RuntimeError) as exc:
            return {"skipped": True, "reason": f"kenning connect {driver.name} failed: {str(exc)[-300:]}"}
        with httpx.Client(base_url=daemon.url, timeout=600) as http:
            began = time.monotonic()
            repo = work / cm.PROJECT  # the sessions' cwd: the hooks name the project after it
            sha_of = cm.build_repo(repo, commits)
            texts = {sha_of[c["sha"]]: (c["subject"], c["body"], c["date"]) for c in commits}
            first = cm.ingest_repo(http, repo, texts)
            timings["ingest_history_s"] = round(time.monotonic() - began, 1)
            sha_units = {sha_of[c["sha"]]: f"commit:{c['sha'][:10]}" for c in commits}
            keys: dict[str, str] = {}  # the harness's session id -> the chat (or task) it replayed
            replayed: list[dict] = []
            began = time.monotonic()
            events = sorted([(c.at, "chat", c) for c in chats] + [(p.at, "commit", p) for p in planted],
                            key=lambda e: e[0])
            for n, (_, kind, item) in enumerate(events):
                if kind == "commit":
                    item.sha = cm.commit_planted(repo, item)
                    sha_units[item.sha] = item.key
                    texts[item.sha] = (item.subject, item.body, cm.utc_iso(item.at))
                    cm.ingest_repo(http, repo, texts)
                else:
                    pairs = exchanges(item.turns)
                    got = driver.chat(http, repo, cm.PROJECT, pairs) if pairs else {"skipped": "no user turn"}
                    if "session" in got:
                        keys[got["session"]] = item.key
                    replayed.append({"key": item.key, "turns": len(pairs), **got,
                                     **({"first": pairs[0]} if pairs else {})})
                if n % 10 == 0:
                    print(f"[real_harness:{driver.name}] {n + 1}/{len(events)} events, "
                          f"{time.monotonic() - began:.0f} s", file=sys.stderr)
            timings["replay_s"] = round(time.monotonic() - began, 1)
            settled = driver.settle(http, [r["session"] for r in replayed if "session" in r])
            drained = cm.drain_pipeline(http, args.drain_limit_s)
            # recall first: the task sessions below end (their episodes hold the bug report itself)
            recalls = {t.id: cm.post(http, "/api/memory/recall", {"query": t.bug_report, "limit": cm.K,
                                                                 "project": cm.PROJECT})["results"] for t in tasks}
            began = time.monotonic()
            shown: dict[str, list[str]] = {}
            started: dict[str, list[str]] = {}  # what session start put in the first request (Claude Code's block)
            chars: list[int] = []
            task_exits: set[int] = set()
            forgotten = 0
            for task in tasks:
                code, request, session = driver.task(http, repo, cm.PROJECT, task.bug_report)
                task_exits.add(code)
                if session:
                    keys[session] = f"task-{task.id}"
                    if args.forget_task_sessions:
                        forgotten += forget_session(http, session, args.drain_limit_s)
                blocks = driver.blocks(request)
                shown[task.id] = shown_ids(blocks)
                started[task.id] = shown_ids(_START_CONTEXT.findall(request))
                chars.append(sum(len(block) for block in blocks))
            timings["task_sessions_s"] = round(time.monotonic() - began, 1)
            if args.forget_task_sessions:
                timings["task_memories_forgotten"] = forgotten
            cm.drain_pipeline(http, args.drain_limit_s)  # the task sessions' own summaries
            prov = RealProvenance(http, sha_units, keys)
            rows = []
            for task in tasks:
                if not task.scorable:
                    continue
                row = cm.task_scores(task, [prov.units(m) for m in shown[task.id]],
                                     [prov.units(h["id"]) for h in recalls[task.id]])
                row["injected_count"] = len(shown[task.id])
                rows.append(row)
            failed = [r for r in replayed if "error" in r]
            return {
                "skipped": False, "harness": driver.name, "cli_version": version(driver.name),
                "history_ingest": first, "pipeline_drain": drained, "settle": settled, "timings_s": timings,
                "chats_replayed": len(replayed), "chats_failed": failed[:10],
                "chat_exit_codes": sorted({c for r in replayed for c in r.get("exit", [])}),
                "task_exit_codes": sorted(task_exits),
                "harness_text_stored": harness_text_stored(daemon.home / "memories.db", http),
                "first_exchanges": first_exchange_complete(http, replayed),
                "store": cm.store_summary(http, sum(c.key.startswith("decoy-") for c in chats)),
                "injected_chars_in_model_request": cm.chars_summary(chars) if chars else {},
                "session_start_slots": (cm.slots_by_origin({t: ({"memory_ids": ids}, None) for t, ids in started.items()},
                                                           prov, tasks) if driver.name == "claude-code" else {}),
                "rows": rows, "metrics": cm.aggregate(rows),
            }
    finally:
        daemon.stop()


def subset(tasks, chats, planted, n: int | None):
    """The first `n` tasks taken in turn from each source (history, conversation, amended), with only
    their own chats and planted commits (decoys stay): a smaller replay every arm of the run shares."""
    if n is None or n >= len(tasks):
        return tasks, chats, planted
    queues = [[t for t in tasks if t.source == source] for source in cm.SOURCES]
    picked: list = []
    while len(picked) < n:
        for queue in queues:
            if queue and len(picked) < n:
                picked.append(queue.pop(0))
    ids = {t.id for t in picked}
    owner = re.compile(r"^chat-(.+?)(-[AB])?$")

    def kept(key: str) -> bool:
        match = owner.match(key)
        return not match or match.group(1) in ids

    return ([t for t in tasks if t.id in ids], [c for c in chats if kept(c.key)],
            [p for p in planted if p.key.split(":", 1)[1] in ids])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="default: ../shared/bench/sde")
    parser.add_argument("--decoys", type=int, default=None, help="use only the first N decoy chats (quick runs)")
    parser.add_argument("--tasks", type=int, default=None,
                        help="only N tasks (in turn from each source) and their own chats (smaller replays)")
    parser.add_argument("--harness", choices=sorted(DRIVERS), default="claude-code")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--baseline", action="store_true", help="also coding_memory's default arm (hook replay)")
    parser.add_argument("--drain-limit-s", type=float, default=1800.0)
    parser.add_argument("--keep", action="store_true", help="keep the temp folder: home-<harness>/memories.db holds "
                        "prompt_candidates and session_memories for each task session (bench/store_read.py reads it)")
    parser.add_argument("--forget-task-sessions", action="store_true",
                        help="forget each task session's memories once it ended (its episode is the bug report): later "
                             "tasks then meet the store the chats left, as in coding_memory's replay")
    parser.add_argument("--label", default="")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    args.data = args.data or cm.default_data()
    now = datetime.now(timezone.utc)
    tasks, chats, planted, commits = cm.load(args.data, args.decoys, args.seed, now)
    tasks, chats, planted = subset(tasks, chats, planted, args.tasks)
    work = Path(tempfile.mkdtemp(prefix="kenning-bench-real-"))
    git_rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True).stdout.strip()
    result: dict = {"bench": "real_harness", "label": args.label, "seed": args.seed, "bench_commit": git_rev,
                    "harness": args.harness, "decoys": args.decoys,
                    "forget_task_sessions": args.forget_task_sessions, "tasks": len(tasks), "scored_tasks": sum(t.scorable for t in tasks),
                    "chats": len(chats), "commits": len(commits) + len(planted), "cpus": os.cpu_count(), "arms": {}}
    result["arms"]["bm25"] = cm.run_bm25(tasks, chats, planted, commits)
    began = time.monotonic()
    result["arms"][args.harness] = run_real(DRIVERS[args.harness](work), tasks, chats, planted, commits, work, args)
    result["arms"][args.harness]["wall_s"] = round(time.monotonic() - began, 1)
    if args.baseline:
        began = time.monotonic()
        result["arms"]["hook-replay"] = cm.run_kenning("default", None, tasks, chats, planted, commits, work, args)
        result["arms"]["hook-replay"]["wall_s"] = round(time.monotonic() - began, 1)
    real = result["arms"][args.harness]
    if not real.get("skipped"):
        m, bm = real["metrics"], result["arms"]["bm25"]["metrics"]
        result["targets"] = {
            "injected>=0.97": m["overall"].get("injected", 0) >= 0.97,
            "hit@10>=bm25": m["overall"].get("hit@10", 0) >= bm["overall"].get("hit@10", 0),
            "harness_text_stored==0": real["harness_text_stored"]["memories"] == 0
            and not real["harness_text_stored"]["rows_by_table"],
            "first_exchanges_complete": real["first_exchanges"]["rate"] == 1.0,
        }
        replay = result["arms"].get("hook-replay", {})
        if replay and not replay.get("skipped"):
            result["vs_coding_memory"] = {k: round(m["overall"].get(k, 0) - replay["metrics"]["overall"].get(k, 0), 3)
                                          for k in ("injected", "hit@5", "hit@10", "mrr@10")}
            result["targets"]["within_0.03_of_coding_memory"] = all(abs(v) <= 0.03
                                                                     for v in result["vs_coding_memory"].values())
    for arm in result["arms"].values():
        arm.pop("rows", None) if not arm.get("skipped") and len(arm.get("rows", [])) > 40 else None
    text = json.dumps(result, indent=2, default=str)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    if not args.keep:
        subprocess.run(["rm", "-rf", str(work)], check=False)


if __name__ == "__main__":
    main()
