"""Read a full dev-split store as a user would (issue 31): rule-typed memories at random, session-start blocks.

    .venv/bin/python bench/coding_memory.py --arms default --keep ...      # leaves /tmp/kenning-bench-coding-*/
    .venv/bin/python bench/store_read.py --home /tmp/kenning-bench-coding-XXXX/home-default --out read.txt
    PYTHONPATH=/tmp/before/src .venv/bin/python bench/store_read.py --home <the before run's home> ...

Prints how many live rule-typed memories are kept and how many wait in review (issue 31: a rule that leans on
another sentence goes to review, not injected unasked), then `--n` live rule-typed memories (constraint, decision, preference, gotcha; not superseded, not deleted)
drawn with `--seed` from the store, each with its type, source, the claim rule that kept it, review state and
scope, for a reader to judge (self-contained durable rule / needs context / fragment / not a rule); then the
session-start block of `--starts` task sessions (the dev split's tasks, drawn with the same seed), opened one
after the other through the service on a copy of the home (the store read is untouched). The verdicts are
the reader's: this script only draws and prints, the same way before and after.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import socket
import sqlite3
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.append(str(ROOT.parent / "src"))  # PYTHONPATH first: "before" runs point it at an old tree

RULE_TYPES = ("constraint", "decision", "preference", "gotcha")
PROJECT, CWD = "boltons", "/src/boltons"  # as bench/coding_memory.py stores them


def default_data() -> Path:
    for parent in ROOT.parents:
        if (parent.parent / "shared" / "bench" / "sde" / "tasks.json").exists():
            return parent.parent / "shared" / "bench" / "sde"
    return Path("../shared/bench/sde")


def rules(db: Path) -> list[dict]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    marks = ",".join("?" * len(RULE_TYPES))
    rows = conn.execute(f"SELECT * FROM memories WHERE is_deleted = 0 AND superseded_by IS NULL AND type IN ({marks}) "
                        "ORDER BY id", RULE_TYPES).fetchall()
    conn.close()
    return [dict(r) for r in rows]


def first_prompts(db: Path, bug_report: str, top: int) -> list[tuple[str, list[sqlite3.Row]]]:
    """What each session opened by `bug_report` (a task session: coding_memory's task-<id>, or a real harness's own
    session id) was offered at its first prompt: prompt_candidates in recall order, with whether it was shown and the
    session and source of each candidate (deleted ones too: `real_harness.py --forget-task-sessions` forgets them)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    keys = [r[0] for r in conn.execute("SELECT s.session_key FROM session_prompts s WHERE s.prompt = ? AND s.idx = (SELECT MIN(q.idx) "
                                       "FROM session_prompts q WHERE q.session_key = s.session_key) ORDER BY s.created_at", (bug_report,))]
    out = [(key, conn.execute(
        "SELECT p.recall_rank, p.probability, p.shown, m.id, m.session_key, m.source, m.type, m.is_deleted, m.content"
        " FROM prompt_candidates p JOIN memories m ON m.id = p.memory_id WHERE p.session_key = ? AND p.prompt_index = (SELECT MIN(c.prompt_index)"
        " FROM prompt_candidates c WHERE c.session_key = p.session_key) ORDER BY p.recall_rank LIMIT ?", (key, top)).fetchall()) for key in keys]
    conn.close()
    return out


def line(m: dict) -> str:
    meta = json.loads(m.get("metadata") or "{}")
    claim = meta.get("claim") or {}
    state = "review" if m["needs_review"] else "kept"
    if m.get("stale_at"):
        state += ",stale"
    where = f"{m.get('applies')}:{m.get('area') or '-'}" if "applies" in m else "-"
    return f"[{m['type']} | {m['source']} | {claim.get('rule', '-')} | {state} | {where}] {' '.join(m['content'].split())}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _hook(call, kind: str, body: dict) -> dict:
    """Call a session manager hook with a plain body (older code: 9189ac0) or the typed event it takes now."""
    try:
        return dict(call(body))
    except AttributeError:  # the hook reads the event's fields before doing anything
        from kenning.core.events import event_from_dict
        return dict(call(event_from_dict({**body, "kind": kind})))


def start_blocks(home: Path, tasks: list[dict]) -> list[tuple[str, list[str], str, int]]:
    from kenning.core.config import load_settings
    from kenning.service import Kenning

    copy = Path(tempfile.mkdtemp(prefix="kenning-store-read-"))
    for name in ("memories.db", "config.yaml"):
        if (home / name).exists():
            shutil.copy2(home / name, copy / name)
    service = Kenning(load_settings(environ={"KENNING_HOME": str(copy)}, port=free_port())).start(background=False)
    out = []
    try:
        for task in tasks:  # as the bench's task sessions: session start, then the bug report as the first prompt
            key, at = f"read-{task['task_id']}", datetime.now(timezone.utc).isoformat()
            got = _hook(service.sessions.session_start, "session_started",
                        {"session_key": key, "harness": "claude-code", "project": PROJECT, "cwd": CWD, "timestamp": at})
            prompt = _hook(service.sessions.user_prompt_submit, "prompt_submitted",
                           {"session_key": key, "prompt": task["bug_report"], "timestamp": at})
            out.append((task["task_id"], list(got.get("memory_ids") or []), got.get("inject") or "",
                        len(prompt.get("memory_ids") or [])))
    finally:
        service.close()
        shutil.rmtree(copy, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="a kept bench home (holds memories.db)")
    parser.add_argument("--data", type=Path, default=None, help="default: ../shared/bench/sde")
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--first-prompt", action="append", default=[], metavar="TASK_ID",
                        help="print what the task's session(s) were offered at the first prompt (repeatable)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    found = rules(args.home / "memories.db")
    drawn = sorted(rng.sample(found, min(args.n, len(found))), key=lambda m: m["id"])
    review = sum(bool(m["needs_review"]) for m in found)
    text = [f"# {len(found)} live rule-typed memories ({len(found) - review} kept, {review} in review: never shown unasked); "
            f"{len(drawn)} drawn (seed {args.seed}): {sum(not m['needs_review'] for m in drawn)} kept, "
            f"{sum(bool(m['needs_review']) for m in drawn)} in review",
            *(f"{i}. {line(m)}" for i, m in enumerate(drawn, 1))]
    tasks = json.loads(((args.data or default_data()) / "tasks.json").read_text())
    picked = sorted(rng.sample(tasks, min(args.starts, len(tasks))), key=lambda t: t["task_id"])
    for task_id, ids, block, at_prompt in start_blocks(args.home, picked):
        text += ["", f"=== session start, task {task_id}: {len(ids)} memories {ids}", block or "(nothing injected)",
                 f"--- first prompt (its bug report): {at_prompt} memories"]
    by_id = {t["task_id"]: t for t in tasks}
    for task_id in args.first_prompt:
        for key, rows in first_prompts(args.home / "memories.db", by_id[task_id]["bug_report"], 12):
            text += ["", f"=== first prompt, task {task_id} (session {key}): recall rank, probability, shown, "
                         "from session, source, type"]
            text += [f"{r['recall_rank']:>3} {r['probability'] or 0:.3f} {'shown' if r['shown'] else '-    '} "
                     f"{r['session_key'] or '-'} {r['source']} {r['type']}{' (forgotten)' if r['is_deleted'] else ''}: "
                     f"{' '.join(r['content'].split())[:140]}" for r in rows]
    report = "\n".join(text)
    if args.out:
        args.out.write_text(report + "\n")
    print(report)


if __name__ == "__main__":
    main()
