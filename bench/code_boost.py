"""Code-neighbourhood boost (issue 15): do memories attached to a function's callers/callees rank
higher when an agent says which function and file it is touching?

    .venv/bin/python bench/code_boost.py --repo /tmp/cgbench/requests-2.32.5 --out /tmp/code_boost.json

A real repository is indexed with kenning's own indexer (`codegraph.indexer.index_path`) into a
temp KENNING_HOME (a real `Kenning` service, default config, real embedding model). Everything
below is generated from that graph (seeded) through kenning's public functions (`impact`,
`store.codegraph.project_paths/file_by_path/file_nodes`):

- code memories: for a sample of functions, a gotcha/decision written about that function
  (`` `Class.method` `` named, related_files = its file) — the kenning link hook attaches them;
- distractors: the same kind of memory about functions elsewhere in the repo (they are in the pool
  above), plus generic notes sharing the queries' words, plus non-code team conventions;
- code queries, as an agent touching code would ask: "I'm changing `g` in path/to/q.py: anything to
  watch out for?". `g` is a function one or two hops from a memory's function: `down` = the memory
  hangs off a callee/imported function of `g` (g depends on it), `up` = off a caller (it depends on
  g). Relevant = every memory whose function is within 2 hops in that direction (from `impact`);
  the query text names only g and its file, never the memory's function;
- controls: `plain` = questions about the conventions with no code in them; `file` = the same
  questions prefixed by "I'm editing path/to/x.py:" (the answer is not code-linked, so a boost that
  lifts code memories could push it down).

Arms, same store, same run: `default` (preset default: hybrid legs, session_context, provenance),
`default+code` (the same plus the code_neighbourhood stage, i.e. what "on by default" would be)
and `code` (the opt-in preset: hybrid, session_context, code_neighbourhood).
Measured per query kind and hop distance: hit@5, hit@10, MRR@10, and `same_file@10` (mean number of
the top 10 that are memories about other functions of the query's own file: not relevant here, but
the stage gives them its largest lift, distance 0).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from kenning.codegraph.impact import impact
from kenning.codegraph.indexer import index_path
from kenning.core.config import load_settings
from kenning.core.types import MemoryDraft, MemoryFilter
from kenning.retrieval.config import preset
from kenning.service import Kenning
from kenning.store import codegraph as code_store

PROJECT = "bench"
GOTCHAS = (
    "Gotcha: `{sym}` mutates the dict it is given in place; copy before passing shared settings.",
    "Decision: keep the signature of `{sym}` stable, third-party adapters call it positionally.",
    "`{sym}` runs on every request, so no logging or regex compilation inside it (profiled last sprint).",
    "Careful with `{sym}`: it swallows the exception and returns None on purpose; tests rely on that.",
    "We decided `{sym}` keeps returning a list, not a generator, because callers index into it.",
    "`{sym}` is not thread-safe; the caller holds the lock while it runs.",
    "Do not add encoding detection to `{sym}`: it was very slow on large bodies.",
    "`{sym}` lowercases names before comparing; code elsewhere assumes that normalisation.",
)
QUERIES = (
    "I'm changing `{sym}` in {path}: anything to watch out for?",
    "About to refactor `{sym}` ({path}). What should I know first?",
    "Editing {path}, function `{sym}`: any gotchas or past decisions?",
)
GENERIC = (
    "Anything touching the CI config needs the full matrix run, watch out for the slow macOS job.",
    "Before changing a public function, check the changelog policy: every change gets an entry.",
    "Refactor PRs should stay small; reviewers asked for one function per PR when possible.",
    "Gotchas with the docs build: sphinx warnings are errors, so fix them before pushing.",
    "Past decision: no new runtime dependencies without a discussion on the issue tracker.",
    "When editing tests, keep fixtures in conftest.py rather than inline helpers.",
)
CONVENTIONS = (  # (memory, question)
    ("Releases are cut on Tuesdays by whoever is on call; never on a Friday.", "which day do we cut releases?"),
    ("We use black with line length 100 and isort's black profile.", "what line length and formatter do we use?"),
    ("The staging database is refreshed from a production snapshot every Sunday night.",
     "when is the staging database refreshed?"),
    ("Security reports go to the private security mailing list, never to public issues.",
     "where should security reports go?"),
    ("Coverage must not drop below 92 percent or the CI job fails.", "what is the coverage threshold in CI?"),
    ("The team stand-up is at 9:30 Berlin time; async updates in the channel if you cannot join.",
     "what time is the stand-up?"),
    ("Commit messages follow the imperative mood, subject under 72 characters.",
     "how should commit messages be written?"),
    ("Python 3.9 is the oldest version we support until October.", "what is the oldest Python version supported?"),
    ("Feature flags live in the settings service, not in environment variables.", "where do feature flags live?"),
    ("Pull requests need two approvals when they touch the public API.", "how many approvals does a PR need?"),
    ("Benchmarks run nightly on the dedicated runner; results land in the perf dashboard.",
     "where can I see benchmark results?"),
    ("Dependabot PRs are merged by the maintainer on rotation every Monday.", "who merges dependabot PRs?"),
)


def functions(conn, path: str) -> list[str]:
    info = code_store.file_by_path(conn, PROJECT, path)
    if info is None:
        return []
    return sorted(n["qualname"] for n in code_store.file_nodes(conn, info["id"])
                  if n["kind"] in ("function", "method") and not n["name"].startswith("__"))


def dependents(conn, path: str, symbol: str, depth: int) -> dict[tuple[str, str], int]:
    """(path, symbol) of functions depending on path:symbol within `depth`, with their hop count."""
    out = impact(conn, f"{path}:{symbol}", project=PROJECT, depth=depth, memory_limit=0)
    return {(d["path"], d["symbol"]): d["depth"] for d in out["dependents"]
            if d["symbol"] and d["kind"] in ("function", "method") and d["path"] != path}


def build(conn, rng: random.Random, n_memories: int, n_queries: int) -> tuple[list, list]:
    paths = sorted(p for p in code_store.project_paths(conn, PROJECT)
                   if p.endswith(".py") and "test" not in p.split("/")[-1])
    funcs = [(p, s) for p in paths for s in functions(conn, p)]
    deps = {f: dependents(conn, *f, depth=2) for f in funcs}
    # memory targets: half of the functions with dependents carry a memory (down queries come from
    # their callers); for the other half a caller carries it (up queries name the callee); the rest
    # of the budget goes to functions anywhere (distractors)
    linked = sorted(f for f in funcs if deps[f])
    rng.shuffle(linked)
    half = len(linked) // 2
    targets = linked[:half]
    for f in linked[half:]:
        callers = sorted(g for g in deps[f] if g in deps and g not in targets and g not in linked[half:])
        if callers:
            targets.append(rng.choice(callers))
    others = sorted(f for f in funcs if f not in targets)
    rng.shuffle(others)
    targets += others[: max(0, n_memories - len(targets))]
    memories = [{"target": t, "content": GOTCHAS[i % len(GOTCHAS)].format(sym=t[1]), "kind": "code"}
                for i, t in enumerate(targets)]
    memories += [{"target": None, "content": g, "kind": "generic"} for g in GENERIC]
    memories += [{"target": None, "content": m, "kind": "convention"} for m, _ in CONVENTIONS]
    rng.shuffle(memories)

    queries = []
    down: dict[tuple, dict] = {}   # query function -> {memory target: hops} (query depends on target)
    for t in targets:
        for g, hops in deps[t].items():
            down.setdefault(g, {})[t] = hops
    up: dict[tuple, dict] = {}     # query function -> {memory target: hops} (target depends on query)
    target_set = set(targets)
    for f in funcs:
        near = {t: h for t, h in deps[f].items() if t in target_set}
        if near:
            up[f] = near
    for kind, pool in (("down", down), ("up", up)):
        keys = sorted(k for k in pool if k not in target_set)  # the query's own function has no memory
        rng.shuffle(keys)
        for g in keys[: n_queries]:
            queries.append({"kind": kind, "text": rng.choice(QUERIES).format(sym=g[1], path=g[0]),
                            "relevant": dict(pool[g]), "hops": min(pool[g].values()), "path": g[0]})
    for i, (memory, question) in enumerate(CONVENTIONS):
        queries.append({"kind": "plain", "text": question[0].upper() + question[1:], "relevant_text": memory,
                        "hops": 0})
        path = paths[rng.randrange(len(paths))]
        queries.append({"kind": "file", "text": f"I'm editing {path}: {question}", "relevant_text": memory,
                        "hops": 0})
    return memories, queries


def score(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    rank = next((i + 1 for i, m in enumerate(ranked[:10]) if m in relevant), None)
    return {"hit@5": float(rank is not None and rank <= 5), "hit@10": float(rank is not None),
            "mrr@10": 1.0 / rank if rank else 0.0}


def summarise(rows: list[dict]) -> dict:
    if not rows:
        return {"n": 0}
    keys = ("hit@5", "hit@10", "mrr@10", "same_file@10")
    return {"n": len(rows), **{k: round(sum(r[k] for r in rows) / len(rows), 4) for k in keys}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", default="/tmp/cgbench/requests-2.32.5", help="a Python source tree")
    ap.add_argument("--memories", type=int, default=120, help="code memories (at least one per function with dependents)")
    ap.add_argument("--queries", type=int, default=40, help="code queries per direction (down, up)")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--out")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="kenning-code-boost-") as home:
        settings = load_settings(environ={"KENNING_HOME": home})
        service = Kenning(settings).start(background=False)
        try:
            t0 = time.perf_counter()
            report = index_path(service.db, Path(args.repo), PROJECT)
            index_s = time.perf_counter() - t0
            conn = service.db.reader()
            memories, queries = build(conn, rng, args.memories, args.queries)
            drafts = [MemoryDraft(m["content"], type="decision" if m["kind"] == "code" else "fact", project=PROJECT,
                                  related_files=[m["target"][0]] if m["target"] else [], type_explicit=True)
                      for m in memories]
            results = service.remember_many(drafts)
            by_target: dict[tuple, str] = {}
            file_of = {r.id: m["target"][0] for m, r in zip(memories, results) if m["target"]}
            by_text: dict[str, str] = {}
            for m, r in zip(memories, results):
                if m["target"]:
                    by_target[m["target"]] = r.id
                by_text[m["content"]] = r.id
            conn = service.db.reader()
            links = conn.execute("SELECT COUNT(DISTINCT memory_id) FROM code_memory_links").fetchone()[0]
            base = preset("default")
            arms = {"default": base,
                    "default+code": replace(base, stages=tuple(s for s in base.stages if s != "provenance")
                                            + ("code_neighbourhood",) + (("provenance",) if "provenance" in base.stages else ())),
                    "code": preset("code")}
            per_arm: dict[str, list[dict]] = {a: [] for a in arms}
            filters = MemoryFilter(project=PROJECT)
            for q in queries:
                relevant = ({by_target[t] for t in q["relevant"]} if "relevant" in q else {by_text[q["relevant_text"]]})
                for arm, cfg in arms.items():
                    hits = service.recall(q["text"], limit=10, filters=filters, config=cfg, track_access=False)
                    ids = [h.memory.id for h in hits]
                    per_arm[arm].append({"kind": q["kind"], "hops": q["hops"], **score(ids, relevant),
                                         "same_file@10": sum("path" in q and file_of.get(i) == q["path"] for i in ids)})
        finally:
            service.close()
    groups = {"code (all)": lambda r: r["kind"] in ("down", "up"),
              "down (memory on a callee)": lambda r: r["kind"] == "down",
              "up (memory on a caller)": lambda r: r["kind"] == "up",
              "code, nearest relevant 1 hop": lambda r: r["kind"] in ("down", "up") and r["hops"] == 1,
              "code, nearest relevant 2 hops": lambda r: r["kind"] in ("down", "up") and r["hops"] == 2,
              "control plain": lambda r: r["kind"] == "plain",
              "control file-prefixed": lambda r: r["kind"] == "file"}
    out = {
        "repo": args.repo, "seed": args.seed,
        "index": {"files": report.files_total if hasattr(report, "files_total") else None,
                  "seconds": round(index_s, 2), "report": report.to_dict()},
        "memories": {"code": sum(m["kind"] == "code" for m in memories),
                     "generic": len(GENERIC), "convention": len(CONVENTIONS), "code_linked": links},
        "queries": {k: sum(q["kind"] == k for q in queries) for k in ("down", "up", "plain", "file")},
        "arms": {arm: {"stages": list(cfg.stages), "legs": list(cfg.legs)} for arm, cfg in arms.items()},
        "results": {g: {arm: summarise([r for r in rows if pred(r)]) for arm, rows in per_arm.items()}
                    for g, pred in groups.items()},
    }
    text = json.dumps(out, indent=2, default=str)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
