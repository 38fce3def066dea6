"""Vague prompts over tasks that span sessions (issue 32): does kenning inject what the session needs?

    .venv/bin/python bench/task_sim.py --sessions 240 --seed 11 --out /tmp/task_sim.json
    .venv/bin/python bench/task_sim.py --sessions 40 --window 20                  # quick look

Extends bench/predictor_sim.py: the same simulated world (projects whose tasks run over 3-6 of their
sessions, each task with ~7 notes naming its files and functions, one revised mid-task; evergreen
preferences that drift at the middle of the run; filler) and the same real daemon (`python -m kenning
serve`, fresh home, `latency_budget_ms: 5000`). What differs is the user: they type the way people type.

- session start names nothing but the project;
- the first prompt is vague: it names at most the module ("the billing tests are red again", "pick up
  where we stopped"), never a file or a function (this bench's own phrasings, `VAGUE_*`);
- two or three later prompts: half of them precise (a file and a function of the task), half vague
  ("still the same failure", "what else is left on this");
- the agent rates every memory it was shown on every prompt and at the end (predictor_sim's `rate`:
  needed ≈ 0.7-1, stale ≈ -0.6, unneeded ≈ 0, 5 % wrong), and its transcript names the notes it used;
- session end with the transcript (`wait: true`): kenning writes what it keeps, raw exchanges included,
  which the next vague prompt may match.

A session needs its task's live notes, its project's current preferences and the key facts kenning wrote
that restate a task note (predictor_sim's `needed` and `restating`). Per window: precision and recall
of everything injected (session start + every prompt, each memory once per session), unneeded memories
per session, the same split by phase, and how the shown memories divide by kind. Targets (issue 32),
over the last half of the run: precision ≥ 0.6 and recall ≥ 0.6.

`prompt_candidates` rows (every recall candidate of every prompt, with its probability and features,
whether it was shown) are read from the daemon's store after the run: `--dump-candidates PATH` writes
them with the simulator's label (needed or not) — bench/fit_prompt_bar.py fits the prompt bar on them.
Run against other code (the base commit) with PYTHONPATH pointing at its src.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kenning.sessions.prompt_bar import text_features  # noqa: E402
from predictor_sim import Daemon, World, drive_session, insert_memories, restating, settle  # noqa: E402

VAGUE_FIRST = (
    "the {module} tests are red again",
    "pick up where we stopped",
    "something is still wrong in {module}",
    "ok, back to it",
    "{module} is acting up again, have a look",
    "can we finish the {module} change today?",
    "same problem as yesterday",
    "where did we leave the {module} work?",
)
VAGUE_LATER = (
    "still the same failure",
    "what else is left on this?",
    "hmm, that didn't fix it",
    "try again, and check {module} too",
    "any other gotcha I should know about here?",
)
PRECISE = (
    "{fn}() in {path}: is it still true that it {fact}?",
    "look at {path}, {fn}() breaks the build",
    "why does {fn}() behave like that in {path}?",
)
NEW_TASK = "new task: {words} in {module}"  # the first session of a task says what it is, loosely


TYPES = {"preference": "preference", "task": "fact", "filler": "fact"}  # a project convention is a stated preference


def fact_of(memory: dict) -> str:
    return memory["content"].split("() ", 1)[-1]


def prompts_for(plan: dict, needed: list[dict], rng: random.Random) -> list[tuple[str, str]]:
    """(kind, text) of the session's prompts: one vague opener, then 2-3 precise or vague follow-ups."""
    task = plan["task"]
    module = task["module"]
    first_of_task = plan["index"] == task["sessions"][0]
    if first_of_task:
        words = " ".join(task["name"].split()[1:])  # 'drain stale queue' without the module
        opener = NEW_TASK.format(words=words, module=module)
    else:
        opener = rng.choice(VAGUE_FIRST).format(module=module)
    out = [("vague", opener)]
    notes = [m for m in needed if m["kind"] == "task"]
    for _ in range(rng.randint(2, 3)):
        if notes and rng.random() < 0.5:
            m = rng.choice(notes)
            out.append(("precise", rng.choice(PRECISE).format(fn=m["fn"], path=m["path"], fact=fact_of(m))))
        else:
            out.append(("vague", rng.choice(VAGUE_LATER).format(module=module)))
    return out


def run_session(client: httpx.Client, world: World, plan: dict, reads: list[dict]) -> dict:
    rng = random.Random(f"task-{plan['key']}")
    needed_mem = world.needed(plan)
    needed = {m["id"] for m in needed_mem}
    stale = world.stale(plan)
    by_id = {m["id"]: m for m in world.memories if m["id"]}
    prompts = prompts_for(plan, needed_mem, rng)
    drive = drive_session(client, plan, [text for _, text in prompts], needed, stale, by_id, rng)
    for i, ((kind, prompt), answer) in enumerate(zip(prompts, drive.answers)):
        if len(reads) < 400:
            new = drive.phases[f"prompt:{i + 1}"]
            reads.append({"session": plan["index"], "prompt": prompt, "kind": kind, "inject": answer.get("inject", ""),
                          "shown": new, "needed": [m for m in new if m in needed]})
    known = {m["id"] for m in world.memories if m["id"]}
    # kenning's own distilled notes that restate a needed one count as needed; a raw exchange that quotes
    # them does not (the agent already had the note: a near-copy costs attention, adds nothing)
    exchanges = {r["memory_id"] for r in drive.audit["candidates"]
                 if (r.get("content_preview") or "").startswith("User:")}
    needed |= restating(drive.audit, needed_mem, known) - exchanges
    return session_row(plan, drive.start, drive.phases, needed, stale, by_id)


def session_row(plan: dict, start: dict, phases: dict[str, list[str]], needed: set[str], stale: set[str],
                by_id: dict[str, dict]) -> dict:
    """One session's figures: everything injected (each memory once), per phase, by kind."""
    shown = list(dict.fromkeys(m for ids in phases.values() for m in ids))
    hit = [m for m in shown if m in needed]
    kinds: dict[str, int] = {}
    for m in shown:
        k = by_id[m]["kind"] if m in by_id else "kenning-written"
        k += "" if m in needed else (":stale" if m in stale else ":unneeded")
        kinds[k] = kinds.get(k, 0) + 1
    prompt_ids = [m for p, ids in phases.items() if p != "start" for m in ids]
    return {
        "index": plan["index"], "key": plan["key"], "task": plan["task"]["name"],
        "first_of_task": plan["index"] == plan["task"]["sessions"][0],
        "needed": len(needed), "shown": len(shown), "hit": len(hit),
        "precision": len(hit) / len(shown) if shown else None,
        "recall": len(hit) / len(needed) if needed else None,
        "unneeded": len(shown) - len(hit),
        "start_shown": len(phases["start"]), "start_hit": sum(m in needed for m in phases["start"]),
        "prompt_shown": len(prompt_ids), "prompt_hit": sum(m in needed for m in prompt_ids),
        "continuity": bool(start.get("continuity")), "kinds": kinds, "needed_ids": sorted(needed),
    }


def summary(rows: list[dict]) -> dict:
    """Pooled over the sessions (each shown memory counts once): precision = hits / shown, recall = hits /
    needed; plus the per-session means."""
    shown, hit, needed = (sum(r[k] for r in rows) for k in ("shown", "hit", "needed"))
    kinds: dict[str, int] = {}
    for r in rows:
        for k, v in r["kinds"].items():
            kinds[k] = kinds.get(k, 0) + v
    rs = [r["recall"] for r in rows if r["recall"] is not None]
    ps = [r["precision"] for r in rows if r["precision"] is not None]
    return {
        "sessions": len(rows), "precision": round(hit / shown, 4) if shown else None,
        "recall": round(hit / needed, 4) if needed else None,
        "precision_mean": round(sum(ps) / len(ps), 4) if ps else None, "recall_mean": round(sum(rs) / len(rs), 4) if rs else None,
        "shown_per_session": round(shown / len(rows), 2), "unneeded_per_session": round((shown - hit) / len(rows), 2),
        "start_shown_per_session": round(sum(r["start_shown"] for r in rows) / len(rows), 2),
        "start_precision": (round(sum(r["start_hit"] for r in rows) / s, 4)
                            if (s := sum(r["start_shown"] for r in rows)) else None),
        "prompt_shown_per_session": round(sum(r["prompt_shown"] for r in rows) / len(rows), 2),
        "prompt_precision": (round(sum(r["prompt_hit"] for r in rows) / s, 4)
                             if (s := sum(r["prompt_shown"] for r in rows)) else None),
        "continuity_share": round(sum(r["continuity"] for r in rows) / len(rows), 3),
        "shown_by_kind_per_session": {k: round(v / len(rows), 2) for k, v in sorted(kinds.items())},
    }


def calibration(labelled: list[dict], bar: float = 0.5) -> dict | None:
    """Reliability of the prompt bar on this run: per bin of recorded probability, how many candidates, the
    mean probability and the share the session needed; and precision / recall of those at or above the bar."""
    if not labelled:
        return None
    bins = []
    for i in range(10):
        lo, hi = i / 10, (i + 1) / 10
        got = [r for r in labelled if lo <= r["probability"] < hi or (i == 9 and r["probability"] == 1.0)]
        bins.append({"bin": f"{lo:.1f}-{hi:.1f}", "n": len(got),
                     "predicted": round(sum(r["probability"] for r in got) / len(got), 4) if got else None,
                     "observed": round(sum(r["needed"] for r in got) / len(got), 4) if got else None})
    above = [r for r in labelled if r["probability"] >= bar]
    needed = sum(r["needed"] for r in labelled)
    ece = sum(abs(b["predicted"] - b["observed"]) * b["n"] for b in bins if b["n"]) / len(labelled)
    return {"candidates": len(labelled), "needed": needed, "ece": round(ece, 4), "bins": bins,
            "at_bar": {"bar": bar, "kept": len(above),
                       "precision": round(sum(r["needed"] for r in above) / len(above), 4) if above else None,
                       "recall_of_needed_candidates": round(sum(r["needed"] for r in above) / needed, 4) if needed else None}}


def current_features(recorded: dict[str, float], prompt: str, content: str) -> dict[str, float]:
    """A recorded candidate's features plus the prompt-text ones added since its run (`text_features`),
    computed from the prompt and the memory the way the daemon does now."""
    if set(text_features("", "")) - set(recorded):
        return {**recorded, **text_features(prompt, content)}
    return recorded


def dump_candidates(home: Path, rows: list[dict], path: Path | None) -> list[dict]:
    """The daemon's prompt_candidates rows with the simulator's label (needed in that session or not)."""
    db = home / "memories.db"
    needed = {r["key"]: set(r["needed_ids"]) for r in rows}
    conn = sqlite3.connect(db)
    try:
        got = conn.execute("SELECT session_key, prompt_index, memory_id, recall_rank, probability, features, shown"
                           " FROM prompt_candidates ORDER BY session_key, prompt_index, recall_rank").fetchall()
        content_of = {i: c for i, c in conn.execute("SELECT id, content FROM memories")}
        prompts = {(k, i): t for k, i, t in conn.execute("SELECT session_key, idx, prompt FROM session_prompts")}
    except sqlite3.OperationalError:  # the old code has no such table
        got, content_of, prompts = [], {}, {}
    finally:
        conn.close()
    out = [{"session_key": k, "prompt_index": i, "memory_id": m, "recall_rank": rr, "probability": p,
            "features": current_features(json.loads(f), prompts.get((k, i), ""), content_of.get(m, "")),
            "shown": bool(s), "needed": m in needed.get(k, set())}
           for k, i, m, rr, p, f, s in got if k in needed]
    if path is not None:
        path.write_text("\n".join(json.dumps(r) for r in out) + "\n")
    return out


def label_from_home(home: Path, sessions: int, seed: int, filler: int, path: Path) -> int:
    """The prompt candidates of a (possibly still running) run's store, labelled from the world alone: a
    world memory by its content, kenning's own distilled notes as `restating` does (they name a needed
    task note's file and function in their first 200 characters; an exchange never counts)."""
    world = World(sessions, seed, filler)
    conn = sqlite3.connect(f"file:{home / 'memories.db'}?mode=ro", uri=True)
    try:
        ids = {c: i for i, c in conn.execute("SELECT id, content FROM memories")}
        content_of = {i: c for c, i in ids.items()}
        got = conn.execute("SELECT session_key, prompt_index, memory_id, recall_rank, probability, features, shown"
                           " FROM prompt_candidates ORDER BY session_key, prompt_index, recall_rank").fetchall()
        prompts = {(k, i): t for k, i, t in conn.execute("SELECT session_key, idx, prompt FROM session_prompts")}
    finally:
        conn.close()
    for m in world.memories:
        m["id"] = ids.get(m["content"])
    world_ids = {m["id"] for m in world.memories if m["id"]}
    plans = {p["key"]: p for p in world.sessions}
    needed: dict[str, set[str]] = {}
    out = []
    for k, i, m, rr, p, f, shown in got:
        plan = plans.get(k)
        if plan is None:
            continue
        if k not in needed:
            mem = world.needed(plan)
            marks = [(x["path"], x["fn"]) for x in mem if x["kind"] == "task"]
            needed[k] = {x["id"] for x in mem}
            needed[k] |= {mid for mid, c in content_of.items() if mid not in world_ids and not c.startswith("User:")
                          and any(a in c[:200] and b in c[:200] for a, b in marks)}
        features = current_features(json.loads(f), prompts.get((k, i), ""), content_of.get(m, ""))
        out.append({"session_key": k, "prompt_index": i, "memory_id": m, "recall_rank": rr, "probability": p,
                    "features": features, "shown": bool(shown), "needed": m in needed[k]})
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    return len(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=240)
    ap.add_argument("--window", type=int, default=40)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--filler", type=int, default=60, help="filler notes per project")
    ap.add_argument("--config", default="sessions:\n  latency_budget_ms: 5000\npredictor:\n  score_timeout_ms: 2000\n",
                    help="config.yaml text for the daemon")
    ap.add_argument("--extra-config", default="", help="appended to --config")
    ap.add_argument("--home", type=Path, default=None)
    ap.add_argument("--dump-candidates", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--label-from-home", type=Path, default=None,
                    help="only label the prompt candidates in this run's home (--sessions/--seed/--filler of that run)"
                    " and write them to --dump-candidates")
    args = ap.parse_args()
    if args.label_from_home:
        print(label_from_home(args.label_from_home, args.sessions, args.seed, args.filler, args.dump_candidates))
        return
    world = World(args.sessions, args.seed, args.filler)
    rows: list[dict] = []
    reads: list[dict] = []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kenning-tasksim-") as tmp:
        home = args.home or Path(tmp) / "home"
        daemon = Daemon(home, args.config + args.extra_config)
        try:
            with httpx.Client(base_url=daemon.url, timeout=120) as client:
                for plan in world.sessions:
                    insert_memories(client, world, plan["at"], TYPES, project_rules=False)
                    rows.append(run_session(client, world, plan, reads))
                    settle(client)
                    if (plan["index"] + 1) % args.window == 0:
                        print(json.dumps({"sessions": plan["index"] + 1, **summary(rows[-args.window:])}),
                              file=sys.stderr, flush=True)
        finally:
            daemon.stop()
        labelled = dump_candidates(home, rows, args.dump_candidates)
        half_keys = {r["key"] for r in rows[len(rows) // 2:]}
    half = rows[len(rows) // 2:]
    last = summary(half)
    report = {
        "bench": "task_sim", "sessions": args.sessions, "seed": args.seed, "window": args.window,
        "code": os.environ.get("PYTHONPATH", ""), "config": args.config + args.extra_config,
        "wall_s": round(time.monotonic() - t0, 1),
        "windows": [{**summary(rows[i:i + args.window]), "sessions": f"{i + 1}-{min(i + args.window, len(rows))}"}
                    for i in range(0, len(rows), args.window)],
        "first_half": summary(rows[: len(rows) // 2]), "last_half": last,
        "targets": {"precision_ge_0.6": (last["precision"] or 0) >= 0.6, "recall_ge_0.6": (last["recall"] or 0) >= 0.6},
        "candidates_dumped": len(labelled),
        # the prompt bar's reliability on this run's candidates (all, and the last half's)
        "calibration": calibration(labelled),
        "calibration_last_half": calibration([r for r in labelled if r["session_key"] in half_keys]),
        "reads": reads[-60:],
    }
    text = json.dumps(report, indent=2)
    if args.out:
        args.out.write_text(text)
    print(json.dumps({k: v for k, v in report.items() if k not in ("reads", "windows")}, indent=2))


if __name__ == "__main__":
    main()
