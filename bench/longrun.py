"""Long run (issue 10): does session-end extraction keep memory clean over hundreds of sessions?

    .venv/bin/python bench/longrun.py --out /tmp/longrun.json            # 300 sessions
    .venv/bin/python bench/longrun.py --sessions 60 --window 20           # quick look

A real daemon (`python -m kenning serve`, temp KENNING_HOME, free port, default config) lives
through simulated coding sessions, one a day, over two projects. Each project has topics (a
component with a preference, a rule and a rival option for the rule). A session works on one
topic, the way an agent session does:
- session-start, then the task as the first prompt (both inject memories);
- the transcript: the agent quotes the injected memories it used ("As memory [id] says: …"),
  the user restates the topic's preference, the agent restates the current rule in its own
  words ("We always …"), small talk; the first session on a topic settles its rule
  ("Settled: …"), and a later one may amend it ("Amended rule, superseding …");
- session-end with the transcript (wait: true): the product decides what to keep.
The agent rates what it was shown at session end (`--feedback`, on by default: 1.0 for a memory
about the session's topic and not stale, 0.0 otherwise), as a harness does with <memory-feedback>.
`--predictor off` runs the daemon with `predictor: {enabled: false}` (every user's first
sessions run on the baseline alone). Every run uses a 5 s hook budget (the shared box cuts
the similarity leg at 250 ms).
Per window of sessions: injection precision (session-start + first-prompt injection: share of
the injected memories about the session's topic and not a stale rule), the same for
session start alone (`start_precision`: sessions that injected nothing at start are left out;
`start_injected_per_session` says how many slots were filled, `start_wrong_per_session` how many
of them were off-topic or stale: an empty block has none) and the first prompt alone; the
first ten sessions are reported on their own (`first_ten`); the near-duplicate
share of live memories (cosine ≥ 0.95 to another live memory of the same project, the bundled
embedding model, each text embedded on its own), live memories per session so far. Targets (issue 10): last-window precision ≥
first-window precision; near-duplicates ≤ 2 % of live memories.

`--standing-rules` gives each project one convention that holds for every session in it (stated
in its first session, restated now and then: "In this project we always …"): the one kind of
memory session start can be right about without knowing the task. Without it (the default, as in
issue 10) every memory is about one component, session start is told only the project, so any
memory it shows is right by chance (~1/6) and the agent's ratings take them all out of session start.

Run against other code (e.g. the code before issue 10) with PYTHONPATH pointing at its src.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from predictor_sim import Daemon  # noqa: E402  (real `python -m kenning serve`, temp home, free port)

NEAR_DUP = 0.95
SUBJECTS = [
    "ledger-sync", "quokka-importer", "invoice-renderer", "tariff-engine", "badge-service", "audit-trail",
    "pager-bridge", "geo-tiler", "mail-digest", "quota-keeper", "search-indexer", "webhook-relay",
]
ASPECTS = [
    ("retries", "exponential backoff capped at 30 seconds", "a fixed 5 second delay with 3 attempts"),
    ("storage", "PostgreSQL with one schema per tenant", "SQLite files per tenant on the shared volume"),
    ("dates", "ISO 8601 strings in UTC", "unix epoch milliseconds"),
    ("logging", "structured JSON lines to stdout", "plain text files rotated daily"),
    ("config", "environment variables read once at start", "a TOML file reloaded on SIGHUP"),
    ("tests", "pytest with real SQLite files", "unittest with mocked repositories"),
]
PREFERENCES = [
    "small pull requests with one commit each", "type hints on every public function", "no new dependencies",
    "descriptive names over abbreviations", "early returns over nested ifs", "dataclasses over dicts",
]
# --standing-rules: one convention per project, true in every session of it (the key phrase marks it)
PROJECT_RULES = {
    "proj-0": ("In this project we always write commit messages in the Conventional Commits format.",
               "Conventional Commits"),
    "proj-1": ("In this project every pull request must add an entry to CHANGELOG.md.", "CHANGELOG.md"),
}
TASKS = ["fix a failing test in", "add a flag to", "speed up", "clean up the error handling of", "document"]


@dataclass
class Topic:
    project: str
    subject: str
    aspect: str
    option: str
    rival: str
    preference: str
    visits: int = 0
    amended: bool = False
    stale: list[str] = field(default_factory=list)  # options no longer true
    project_rule: str | None = None  # --standing-rules: the key phrase of its project's convention

    def rule(self) -> str:
        return f"{self.subject} uses {self.option} for {self.aspect}"


def iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def make_topics(rng: random.Random, standing_rules: bool = False) -> list[Topic]:
    topics = []
    for index, subject in enumerate(SUBJECTS):
        aspect, option, rival = ASPECTS[index % len(ASPECTS)]
        project = f"proj-{index % 2}"
        topics.append(Topic(project, subject, aspect, option, rival, rng.choice(PREFERENCES),
                            project_rule=PROJECT_RULES[project][1] if standing_rules else None))
    return topics


def transcript(topic: Topic, task: str, shown: dict[str, str], rng: random.Random,
               project_rule: str | None = None) -> str:
    """The session as the agent would log it; updates the topic's rule when it is settled or amended.
    `project_rule`: the project's convention, said by the user in this session (--standing-rules)."""
    lines = [f"User: {task}"]
    used = [(i, c) for i, c in shown.items()
            if topic.subject in c or (topic.project_rule and topic.project_rule in c)][:3]
    for memory_id, content in used:
        lines.append(f"Assistant: As memory [{memory_id}] says: {' '.join(content.split())[:300]}")
    if project_rule:
        lines.append(f"User: {project_rule}")
    lines.append(f"User: Remember, for {topic.subject} I prefer {topic.preference}.")
    if topic.visits == 1:
        lines.append(f"Assistant: Settled: {topic.rule()}.")
    elif not topic.amended and topic.visits >= 3 and rng.random() < 0.5:
        old = topic.option
        topic.option, topic.rival, topic.amended = topic.rival, old, True
        topic.stale.append(old)
        lines.append(f"User: The {topic.aspect} of {topic.subject} keeps causing incidents; let's change it.")
        lines.append(f"Assistant: Amended rule, superseding {old}: {topic.rule()} from now on.")
    else:
        lines.append(f"Assistant: We always keep to the rule: {topic.rule()}.")
    lines.append(f"User: Thanks. Run the {topic.subject} tests.")
    lines.append(f"Assistant: Done: {rng.randint(10, 90)} tests pass for {topic.subject}.")
    return "\n".join(lines)


def relevant(content: str, topic: Topic) -> bool:
    """About the session's topic and not a stale rule of it, or its project's convention (--standing-rules)."""
    if topic.project_rule and topic.project_rule in content:
        return True
    if topic.subject not in content:
        return False
    return not any(old in content and topic.option not in content for old in topic.stale)


def live_memories(http: httpx.Client) -> list[dict]:
    items, offset = [], 0
    while True:
        page = http.get("/api/memory", params={"limit": 1000, "offset": offset,
                                               "include_superseded": False}).json()
        items += page["items"]
        offset += len(page["items"])
        if not page["items"] or offset >= page["total"]:
            return items


def near_duplicates(items: list[dict], embedder) -> tuple[float, dict[str, int], list[list[str]], float]:
    """(share of live memories with a near-duplicate in their project, count by type, examples, the same
    share leaving out a memory's own source: a claim extracted from an exchange and that exchange —
    `derived_from` — take one slot in recall, so they never compete as duplicates)."""
    if not items:
        return 0.0, {}, [], 0.0
    # one text per call: a padded batch shifts a text's vector by up to 0.04 cosine (measured)
    vectors = np.asarray([embedder.embed_many([m["content"]])[0] for m in items], dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    projects = np.array([m.get("project") or "" for m in items])
    by_type: dict[str, int] = {}
    examples = []
    unrelated = 0
    for i in range(len(items)):
        same = projects == projects[i]
        same[i] = False
        if not same.any():
            continue
        others = np.flatnonzero(same)
        scores = vectors[others] @ vectors[i]
        if float(scores.max()) >= NEAR_DUP:
            by_type[items[i]["type"]] = by_type.get(items[i]["type"], 0) + 1
            if len(examples) < 4:
                examples.append([items[i]["content"][:160], items[int(others[scores.argmax()])]["content"][:160]])
            own = set(items[i].get("derived_from") or [])
            if any(float(score) >= NEAR_DUP and items[o]["id"] not in own
                   and items[i]["id"] not in (items[o].get("derived_from") or []) for o, score in zip(others, scores)):
                unrelated += 1
    return sum(by_type.values()) / len(items), by_type, examples, unrelated / len(items)


def config_text(predictor: str) -> str:
    text = "sessions:\n  latency_budget_ms: 5000\n"
    return text + ("predictor:\n  enabled: false\n" if predictor == "off" else "")


def precision_of(ids: list[str], shown: dict[str, str], topic: Topic) -> float | None:
    return sum(relevant(shown[i], topic) for i in ids) / len(ids) if ids else None


def summarize(done: list[dict]) -> dict:
    def avg(key: str) -> float | None:
        vals = [r[key] for r in done if r[key] is not None]
        return round(float(np.mean(vals)), 4) if vals else None
    return {"precision": avg("precision"), "start_precision": avg("start_precision"),
            "prompt_precision": avg("prompt_precision"),
            "injected_per_session": round(float(np.mean([r["injected"] for r in done])), 2),
            "start_injected_per_session": round(float(np.mean([r["start_injected"] for r in done])), 2),
            # pooled over slots (each filled slot counts once): a session with one slot weighs less than
            # one with four; by chance a topic's memory is right in ~1/6 of its project's sessions
            "start_slot_precision": (round(sum(r.get("start_relevant", 0) for r in done) / slots, 4)
                                     if (slots := sum(r["start_injected"] for r in done)) else None),
            "start_sessions_with_injection": sum(1 for r in done if r["start_injected"]),
            # what session start showed that was off-topic or stale, per session: the noise an agent reads
            # unasked (an empty block has none; its precision is undefined, not 0)
            "start_wrong_per_session": round(float(np.mean([r["start_injected"] - r.get("start_relevant", 0)
                                                            for r in done])), 3)}


def run(sessions: int, window: int, seed: int, home: Path, embedder, predictor: str = "on",
        feedback: bool = True, standing_rules: bool = False) -> dict:
    rng = random.Random(seed)
    rule_rng = random.Random(seed + 1000)  # its own stream: the default run's sessions stay as they were
    topics = make_topics(rng, standing_rules)
    stated: set[str] = set()  # projects whose convention has been said
    daemon = Daemon(home, config_text(predictor))
    starts: list[dict] = []
    start = datetime.now(timezone.utc) - timedelta(days=sessions + 1)
    rows, windows = [], []
    try:
        with httpx.Client(base_url=daemon.url, timeout=600) as http:
            for n in range(sessions):
                topic = rng.choice(topics)
                topic.visits += 1
                at = start + timedelta(days=n)
                key = f"long-{n:04d}"
                task = f"{rng.choice(TASKS)} {topic.subject} ({topic.aspect})"
                s = http.post("/api/hooks/session-start", json={
                    "session_key": key, "project": topic.project, "cwd": f"/src/{topic.project}",
                    "timestamp": iso(at)}).json()
                p = http.post("/api/hooks/user-prompt-submit", json={
                    "session_key": key, "prompt": task, "timestamp": iso(at + timedelta(minutes=1))}).json()
                start_ids = list(s.get("memory_ids", []))
                prompt_ids = [i for i in p.get("memory_ids", []) if i not in start_ids]
                injected = list(dict.fromkeys([*start_ids, *prompt_ids]))
                shown = {i: http.get(f"/api/memory/{i}").json()["content"] for i in injected}
                hits = sum(relevant(c, topic) for c in shown.values())
                said = None
                if standing_rules and (topic.project not in stated or rule_rng.random() < 0.15):
                    said = PROJECT_RULES[topic.project][0]
                    stated.add(topic.project)
                text = transcript(topic, task, shown, rng, said)
                if feedback and injected:  # the agent's ratings of what it was shown
                    http.post("/api/hooks/feedback", json={"session_key": key, "memory_feedback": {
                        i: (1.0 if relevant(c, topic) else 0.0) for i, c in shown.items()}})
                http.post("/api/hooks/session-end", json={
                    "session_key": key, "transcript": text, "wait": True,
                    "timestamp": iso(at + timedelta(minutes=30))})
                rows.append({"session": n, "injected": len(injected), "relevant": hits,
                             "precision": hits / len(injected) if injected else None,
                             "start_injected": len(start_ids),
                             "start_precision": precision_of(start_ids, shown, topic),
                             "start_relevant": sum(relevant(shown[i], topic) for i in start_ids),
                             "prompt_precision": precision_of(prompt_ids, shown, topic)})
                if n < 3 or n >= sessions - 4:  # the block as injected, to read
                    starts.append({"session": n, "topic": topic.subject, "project": topic.project,
                                   "inject": s.get("inject", "")})
                if (n + 1) % window == 0:
                    items = live_memories(http)
                    share, dup_types, examples, share_unrelated = near_duplicates(items, embedder)
                    done = rows[-window:]
                    windows.append({
                        "sessions": f"{n + 2 - window}-{n + 1}",
                        **summarize(done),
                        "live_memories": len(items),
                        "live_per_session": round(len(items) / (n + 1), 3),
                        "near_duplicate_share": round(share, 4),
                        "near_duplicate_share_not_own_source": round(share_unrelated, 4),
                        "near_duplicates_by_type": dup_types,
                        "near_duplicate_examples": examples,
                        "by_type": dict(sorted({t: sum(m["type"] == t for m in items)
                                                for t in {m["type"] for m in items}}.items())),
                    })
                    print(json.dumps(windows[-1]), file=sys.stderr, flush=True)
    finally:
        daemon.stop()
    first, last = windows[0], windows[-1]
    return {
        "sessions": sessions, "window": window, "seed": seed, "predictor": predictor, "feedback": feedback,
        "standing_rules": standing_rules,
        "first_ten": summarize(rows[:10]), "windows": windows, "start_blocks": starts,
        "last_starts": [{"session": r["session"], "start_injected": r["start_injected"],
                         "start_precision": r["start_precision"]} for r in rows[-10:]],
        "targets": {
            "last_precision_ge_first": (last["precision"] or 0) >= (first["precision"] or 0),
            "last_start_precision_ge_first": (last["start_precision"] or 0) >= (first["start_precision"] or 0),
            "last_start_wrong_per_session_le_first": last["start_wrong_per_session"] <= first["start_wrong_per_session"],
            "near_duplicates_le_2pct": all(w["near_duplicate_share"] <= 0.02 for w in windows),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--window", type=int, default=50)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--predictor", choices=["on", "off"], default="on")
    parser.add_argument("--no-feedback", action="store_true", help="the agent rates nothing")
    parser.add_argument("--standing-rules", action="store_true",
                        help="each project has one convention true in every session of it")
    parser.add_argument("--home", type=Path, help="keep the daemon's home here (default: a temp dir)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    from kenning.core.config import Settings
    from kenning.providers.registry import build_embedding_provider

    with tempfile.TemporaryDirectory(prefix="kenning-longrun-") as tmp:
        embedder = build_embedding_provider(Settings(home=Path(tmp) / "embed").embedding)
        report = run(args.sessions, args.window, args.seed, args.home or Path(tmp) / "home", embedder,
                     args.predictor, not args.no_feedback, args.standing_rules)
    report["code"] = os.environ.get("PYTHONPATH", "")
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
