"""Coding memory through the real Claude Code CLI (issue 23): bench/coding_memory.py's replay, but
every chat is one headless Claude Code session and every task question a real `claude -p`.

    .venv/bin/python bench/real_harness.py --decoys 10 --out /tmp/real_harness.json
    .venv/bin/python bench/real_harness.py --decoys 10 --baseline   # + coding_memory's hook replay, same run

Data and timeline: bench/coding_memory.py (sde-bench development split in ../shared/bench/sde, read in
place). Claude Code: the pinned npm version (tests/harness/clis.py), HOME a temp folder, hooks
installed by `kenning connect claude-code`, `ANTHROPIC_BASE_URL` a scripted local Anthropic Messages
server (tests/harness/anthropic_server.py) answering with the chat's own assistant turns.

1. the boltons history is a real git repository ingested as in coding_memory (POST /api/ingest/git);
   the repository folder is the sessions' working directory, so the hooks name the project `boltons`
   the way they would for a user;
2. chats and planted commits in timeline order: a commit is committed and ingested; a chat is one
   Claude Code session fed as stream-json (`--input-format stream-json`, one user line per user turn;
   the scripted model answers each with the assistant turns that follow it in the chat), ended by
   closing its input (SessionEnd). The hooks do everything: session start, each prompt, Stop,
   session end with Claude Code's own transcript JSONL. Chats run now, in order (the hooks carry no
   replay timestamps): memories from chats are dated today, commits at their dates;
3. the pipeline queue is drained; per task one `claude -p "<bug report>"`: the memories that reached the
   model are the `[id]`s in the model request's SessionStart / UserPromptSubmit hook contexts;
4. recall per task as in coding_memory (POST /api/memory/recall), before step 3's sessions: they end
   (SessionEnd), and their episodes would hold the bug report itself (coding_memory's task sessions
   never end).

Reported: coding_memory's metrics (decision injected, recall hit@5/10, MRR@10, amended), plus
`harness_text_stored` (memories and every table but the raw transcript holding system-reminder,
gitStatus, <kenning-memories>, <memory-feedback>, hook contexts or Claude Code's attribution reminder),
`first_exchanges` (the episode holding each chat's first prompt holds the first answer too),
and the CLI version. `--baseline` runs coding_memory's default arm on the same data in the same run.
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
import uuid
from datetime import datetime, timezone
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
import coding_memory as cm  # noqa: E402
from tests.harness.anthropic_server import AnthropicServer  # noqa: E402
from tests.harness.claude_runner import ClaudeHome, Session, run_print  # noqa: E402
from tests.harness.clis import cli_path, version  # noqa: E402

HARNESS_MARKERS = ("system-reminder", "gitStatus", "<kenning-memories", "<memory-feedback", "hook additional context",
                   "hook_context", "Attribution for git commits")
_ID = re.compile(r"\[([0-9a-f]{16})\]")
_CONTEXT = re.compile(r"(SessionStart|UserPromptSubmit) hook additional context: (.*?</kenning-[a-z-]+>)", re.DOTALL)


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


def shown_ids(request_text: str) -> list[str]:
    """The memory ids the hooks' contexts put in one model request, in order (start first)."""
    ids: list[str] = []
    for _, block in _CONTEXT.findall(request_text):
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


def replay_chat(claude: Path, home: ClaudeHome, repo: Path, chat: cm.Chat, keys: dict[str, str]) -> dict:
    pairs = exchanges(chat.turns)
    if not pairs:
        return {"key": chat.key, "skipped": "no user turn"}
    with AnthropicServer() as server:
        server.script(*[answer for _, answer in pairs])
        with Session(claude, home, repo, server.url) as session:
            keys[session.session_id] = chat.key
            for user, _ in pairs:
                session.turn(user)
            code = session.close()
    return {"key": chat.key, "session": session.session_id, "exit": code, "first": pairs[0], "turns": len(pairs)}


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


def run_real(tasks, chats, planted, commits, work: Path, args) -> dict:
    claude = cli_path("claude-code")
    daemon, error = cm.start_daemon(work / "home-real", None)
    if daemon is None:
        return {"skipped": True, "reason": error}
    timings: dict[str, float] = {}
    home = ClaudeHome(work / "claude-home")
    kenv = {"KENNING_HOME": str(daemon.home), "KENNING_PORT": str(daemon.port)}
    try:
        connected = home.connect(kenv)
        if connected.returncode != 0:
            return {"skipped": True, "reason": f"kenning connect claude-code failed: {connected.stderr[-300:]}"}
        with httpx.Client(base_url=daemon.url, timeout=600) as http:
            began = time.monotonic()
            repo = work / cm.PROJECT  # the sessions' cwd: the hooks name the project after it
            sha_of = cm.build_repo(repo, commits)
            texts = {sha_of[c["sha"]]: (c["subject"], c["body"], c["date"]) for c in commits}
            first = cm.ingest_repo(http, repo, texts)
            timings["ingest_history_s"] = round(time.monotonic() - began, 1)
            sha_units = {sha_of[c["sha"]]: f"commit:{c['sha'][:10]}" for c in commits}
            keys: dict[str, str] = {}
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
                    replayed.append(replay_chat(claude, home, repo, item, keys))
                if n % 10 == 0:
                    print(f"[real_harness] {n + 1}/{len(events)} events, {time.monotonic() - began:.0f} s", file=sys.stderr)
            timings["replay_s"] = round(time.monotonic() - began, 1)
            drained = cm.drain_pipeline(http, args.drain_limit_s)
            # recall first: the task sessions below end (their episodes hold the bug report itself)
            recalls = {t.id: cm.post(http, "/api/memory/recall", {"query": t.bug_report, "limit": cm.K,
                                                                 "project": cm.PROJECT})["results"] for t in tasks}
            began = time.monotonic()
            shown: dict[str, list[str]] = {}
            chars: list[int] = []
            for task in tasks:
                with AnthropicServer() as server:
                    server.script("I will look at it.")
                    code, lines, _ = run_print(claude, home, repo, server.url, task.bug_report)
                    request = server.model_requests()[0].text() if server.model_requests() else ""
                session_id = next((line.get("session_id") for line in lines if line.get("session_id")), None)
                if session_id:
                    keys[session_id] = f"task-{task.id}"
                shown[task.id] = shown_ids(request)
                chars.append(sum(len(block) for _, block in _CONTEXT.findall(request)))
            timings["task_sessions_s"] = round(time.monotonic() - began, 1)
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
            return {
                "skipped": False, "claude_code": version("claude-code"), "history_ingest": first,
                "pipeline_drain": drained, "timings_s": timings,
                "chats_replayed": len(replayed), "chat_exit_codes": sorted({r.get("exit") for r in replayed}, key=str),
                "harness_text_stored": harness_text_stored(daemon.home / "memories.db", http),
                "first_exchanges": first_exchange_complete(http, replayed),
                "store": cm.store_summary(http, sum(c.key.startswith("decoy-") for c in chats)),
                "injected_chars_in_model_request": cm.chars_summary(chars) if chars else {},
                "rows": rows, "metrics": cm.aggregate(rows),
            }
    finally:
        daemon.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="default: ../shared/bench/sde")
    parser.add_argument("--decoys", type=int, default=None, help="use only the first N decoy chats (quick runs)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--baseline", action="store_true", help="also coding_memory's default arm (hook replay)")
    parser.add_argument("--drain-limit-s", type=float, default=1800.0)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--label", default="")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    args.data = args.data or cm.default_data()
    now = datetime.now(timezone.utc)
    tasks, chats, planted, commits = cm.load(args.data, args.decoys, args.seed, now)
    work = Path(tempfile.mkdtemp(prefix="kenning-bench-real-"))
    git_rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True).stdout.strip()
    result: dict = {"bench": "real_harness", "label": args.label, "seed": args.seed, "bench_commit": git_rev,
                    "decoys": args.decoys, "tasks": len(tasks), "scored_tasks": sum(t.scorable for t in tasks),
                    "chats": len(chats), "commits": len(commits) + len(planted), "cpus": os.cpu_count(), "arms": {}}
    result["arms"]["bm25"] = cm.run_bm25(tasks, chats, planted, commits)
    began = time.monotonic()
    result["arms"]["claude-code"] = run_real(tasks, chats, planted, commits, work, args)
    result["arms"]["claude-code"]["wall_s"] = round(time.monotonic() - began, 1)
    if args.baseline:
        began = time.monotonic()
        result["arms"]["hook-replay"] = cm.run_kenning("default", None, tasks, chats, planted, commits, work, args)
        result["arms"]["hook-replay"]["wall_s"] = round(time.monotonic() - began, 1)
    real = result["arms"]["claude-code"]
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
