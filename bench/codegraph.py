"""Code graph benchmark: index time and size, impact latency, edge correctness. JSON out.

    .venv/bin/python bench/codegraph.py --repo attrs=/tmp/cgbench/attrs-25.4.0 \
        --repo rxjs=/tmp/cgbench/rxjs/package --out /tmp/codegraph.json

Per repository (each into a fresh SQLite file): cold index seconds, files / nodes / edges /
closure rows and database bytes; a no-change re-index; a one-file edit re-index; impact
p50/p95 (ms) at depth 1, 2 and 3 over sampled targets, through the closure table and — the
baseline, same run, same answers — breadth-first over the edges table without the closure.
Python repositories are checked against a second method in the same run (bench/codegraph_truth.py:
Python's `ast` resolving imports and direct calls): precision / recall of `calls` and `imports`.
A generated polyglot fixture (TypeScript, Go, Rust, Python; chains of modules with known
imports and calls) is checked against the edges the generator wrote. Targets (issue 15):
p95 <= 20 ms at depth 3 on a 2,000-file repository; cold index of a 500-file Python
repository <= 60 s; Python precision/recall >= 0.95 / 0.90.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from codegraph_truth import Truth  # noqa: E402

from kenning.codegraph import closure  # noqa: E402
from kenning.codegraph.files import list_source_files  # noqa: E402
from kenning.codegraph.impact import impact  # noqa: E402
from kenning.codegraph.indexer import index_path, refresh_files  # noqa: E402
from kenning.store import codegraph as store  # noqa: E402
from kenning.store.db import open_database  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3) if ordered else 0.0


def graph_edges(db, project: str, kind: str) -> set[tuple[str, str]]:
    rows = db.reader().execute(
        "SELECT fa.path || ':' || a.qualname, fb.path || ':' || b.qualname FROM code_edges e "
        "JOIN code_nodes a ON a.id = e.src JOIN code_files fa ON fa.id = a.file_id "
        "JOIN code_nodes b ON b.id = e.dst JOIN code_files fb ON fb.id = b.file_id "
        "WHERE fa.project = ? AND e.kind = ? AND e.stale_at IS NULL", (project, kind)).fetchall()
    return {(r[0], r[1]) for r in rows}


def prf(got: set, truth: set) -> dict:
    hit = len(got & truth)
    return {"graph": len(got), "truth": len(truth), "both": hit,
            "precision": round(hit / len(got), 4) if got else None,
            "recall": round(hit / len(truth), 4) if truth else None}


def bfs_without_closure(conn, seeds: list[int], depth: int) -> set[int]:
    seen, frontier = set(seeds), list(seeds)
    for _ in range(depth):
        nxt = []
        for src, _, _ in store.dependents_of(conn, frontier):
            if src not in seen:
                seen.add(src)
                nxt.append(src)
        if not nxt:
            break
        frontier = nxt
    return seen - set(seeds)


def latency(db, project: str, samples: int, seed: int) -> dict:
    conn = db.reader()
    rows = conn.execute(
        "SELECT f.path, n.qualname, n.id FROM code_nodes n JOIN code_files f ON f.id = n.file_id "
        "WHERE f.project = ? AND n.qualname != '' ORDER BY n.id", (project,)).fetchall()
    anchors = {r[0] for r in conn.execute("SELECT DISTINCT anchor FROM code_closure")}
    rng = random.Random(seed)
    with_deps = [r for r in rows if r[2] in anchors]
    picks = rng.sample(with_deps, min(samples // 2, len(with_deps))) + rng.sample(rows, min(samples // 2, len(rows)))
    out = {}
    for depth in (1, 2, 3):
        wall, cpu, ids_closure, ids_bfs, sizes, same = [], [], [], [], [], 0
        for path, qualname, node_id in picks:
            t0, c0 = time.perf_counter(), time.process_time()
            data = impact(conn, f"{path}:{qualname}", project=project, depth=depth)
            wall.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
            seeds = [n["id"] for n in store.file_nodes(conn, store.file_by_path(conn, project, path)["id"], qualname)]
            c0 = time.process_time()
            via_closure = {r["node"] for r in store.closure_rows(conn, seeds, depth)} - set(seeds)
            ids_closure.append((time.process_time() - c0) * 1000)
            c0 = time.process_time()
            reached = bfs_without_closure(conn, seeds, depth)
            ids_bfs.append((time.process_time() - c0) * 1000)
            sizes.append(len(data["dependents"]) + len(data["tests"]))
            same += via_closure == reached
        out[f"depth{depth}"] = {
            "targets": len(picks),
            "impact_wall_p50_ms": pct(wall, 0.5), "impact_wall_p95_ms": pct(wall, 0.95),
            "impact_cpu_p50_ms": pct(cpu, 0.5), "impact_cpu_p95_ms": pct(cpu, 0.95),
            "dependent_ids_closure_cpu_p50_ms": pct(ids_closure, 0.5), "dependent_ids_closure_cpu_p95_ms": pct(ids_closure, 0.95),
            "dependent_ids_bfs_cpu_p50_ms": pct(ids_bfs, 0.5), "dependent_ids_bfs_cpu_p95_ms": pct(ids_bfs, 0.95),
            "dependents_median": statistics.median(sizes) if sizes else 0, "dependents_max": max(sizes, default=0),
            "closure_equals_bfs": same,
        }
    return out


def python_truth(root: Path, db, project: str) -> dict:
    paths = [p for p in list_source_files(root) if p.endswith(".py")]
    sources = {}
    for p in paths:
        try:
            sources[p] = (root / p).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
    packages = {str(Path(p).parent) for p in paths if p.endswith("__init__.py")}
    t0 = time.perf_counter()
    truth = Truth(sources, packages).edges()
    seconds = time.perf_counter() - t0
    py = set(sources)
    graph = {kind: {e for e in graph_edges(db, project, kind) if e[0].split(":")[0] in py}
             for kind in ("calls", "imports")}
    return {"ast_seconds": round(seconds, 2), "python_files": len(sources),
            "calls": prf(graph["calls"], truth["calls"]), "imports": prf(graph["imports"], truth["imports"]),
            "calls_missed_examples": sorted(truth["calls"] - graph["calls"])[:8],
            "calls_extra_examples": sorted(graph["calls"] - truth["calls"])[:8],
            "imports_missed_examples": sorted(truth["imports"] - graph["imports"])[:5],
            "imports_extra_examples": sorted(graph["imports"] - truth["imports"])[:5]}


def run_repo(name: str, root: Path, samples: int, seed: int, workdir: Path) -> dict:
    db_path = workdir / f"{name}.db"
    db = open_database(db_path)
    t0 = time.perf_counter()
    report = index_path(db, root, name)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    warm = index_path(db, root, name)
    warm_s = time.perf_counter() - t0
    stats = store.graph_stats(db.reader(), name)
    languages = dict(db.reader().execute(
        "SELECT language, COUNT(*) FROM code_files WHERE project = ? GROUP BY language", (name,)).fetchall())
    # one-file edit: append a function to the most imported file, re-index just that file
    hub = db.reader().execute(
        "SELECT f.path, COUNT(*) c FROM code_edges e JOIN code_nodes n ON n.id = e.dst "
        "JOIN code_files f ON f.id = n.file_id WHERE f.project = ? AND e.kind = 'imports' "
        "GROUP BY f.path ORDER BY c DESC LIMIT 1", (name,)).fetchone()
    edit = None
    if hub is not None:
        target = root / hub[0]
        original = target.read_bytes()
        try:
            first = db.reader().execute(
                "SELECT n.qualname FROM code_nodes n JOIN code_files f ON f.id = n.file_id WHERE f.project = ? "
                "AND f.path = ? AND n.kind IN ('function', 'class') ORDER BY n.start_line LIMIT 1",
                (name, hub[0])).fetchone()
            call = first[0] if first else "print"
            probe = (f"\n\ndef _kenning_bench_probe():\n    return {call}()\n" if hub[0].endswith(".py") else
                     f"\n\nexport function kenningBenchProbe() {{ return {call}(); }}\n")
            target.write_bytes(original + probe.encode())  # a new function calling a definition of the file
            t0 = time.perf_counter()
            rep = refresh_files(db, name, [hub[0]])
            edit = {"file": hub[0], "seconds": round(time.perf_counter() - t0, 4), "resolved_files": rep.resolved,
                    "closure": rep.closure, "anchors": rep.anchors}
        finally:
            target.write_bytes(original)
            index_path(db, root, name)
    result = {
        "root": str(root), "languages": languages, "files": report.files, "cold_index_s": round(cold, 2),
        "noop_reindex_s": round(warm_s, 3), "noop_parsed": warm.parsed, "syntax_errors": len(report.syntax_errors),
        "one_file_edit": edit, **stats,
        "db_bytes": sum(p.stat().st_size for p in workdir.glob(f"{name}.db*")),
        "impact": latency(db, name, samples, seed),
    }
    if "python" in languages:
        result["python_truth"] = python_truth(root, db, name)
    db.close()
    return result


# -- generated polyglot fixture -------------------------------------------------------------------
def polyglot(root: Path, n: int) -> dict[str, set[tuple[str, str, str]]]:
    """Chains of n modules per language: module i imports i-1 and calls its function and its
    class's method; each class method calls a sibling through self/this. Returns expected edges."""
    expected: dict[str, set] = {"typescript": set(), "go": set(), "rust": set(), "python": set()}
    (root / "go.mod").write_text("module example.com/poly\n")
    (root / "Cargo.toml").write_text('[package]\nname = "poly"\nversion = "0.1.0"\n')
    (root / "src").mkdir(parents=True, exist_ok=True)
    lib = []
    for i in range(n):
        prev = i - 1
        # TypeScript
        ts = [f"import {{ f{prev}, C{prev} }} from './m{prev}';\n" if i else ""]
        ts.append(f"export function f{i}(x: number): number {{ return {f'f{prev}(x) + new C{prev}().run()' if i else 'x'}; }}\n")
        ts.append(f"export class C{i} {{ run(): number {{ return this.step(); }} step(): number {{ return {i}; }} }}\n")
        (root / "ts").mkdir(exist_ok=True)
        (root / f"ts/m{i}.ts").write_text("".join(ts))
        e = expected["typescript"]
        e.add(("calls", f"ts/m{i}.ts:C{i}.run", f"ts/m{i}.ts:C{i}.step"))
        if i:
            e |= {("imports", f"ts/m{i}.ts:", f"ts/m{prev}.ts:"), ("calls", f"ts/m{i}.ts:f{i}", f"ts/m{prev}.ts:f{prev}"),
                  ("calls", f"ts/m{i}.ts:f{i}", f"ts/m{prev}.ts:C{prev}")}
        # Go: one package per module
        go = [f"package p{i}\n\n"]
        if i:
            go.append(f'import "example.com/poly/go/p{prev}"\n\n')
        go.append(f"type T{i} struct{{}}\n\nfunc (t *T{i}) Run() int {{ return t.step() }}\n\nfunc (t *T{i}) step() int {{ return {i} }}\n\n")
        go.append(f"func F{i}(x int) int {{ return {f'p{prev}.F{prev}(x)' if i else 'x'} }}\n")
        (root / f"go/p{i}").mkdir(parents=True, exist_ok=True)
        (root / f"go/p{i}/p{i}.go").write_text("".join(go))
        e = expected["go"]
        e.add(("calls", f"go/p{i}/p{i}.go:T{i}.Run", f"go/p{i}/p{i}.go:T{i}.step"))
        if i:
            e |= {("imports", f"go/p{i}/p{i}.go:", f"go/p{prev}/p{prev}.go:"),
                  ("calls", f"go/p{i}/p{i}.go:F{i}", f"go/p{prev}/p{prev}.go:F{prev}")}
        # Rust: src/m{i}.rs
        rs = [f"use crate::m{prev}::{{f{prev}, S{prev}}};\n\n" if i else ""]
        rs.append(f"pub struct S{i};\n\nimpl S{i} {{\n    pub fn new() -> Self {{ S{i} }}\n"
                  f"    pub fn run(&self) -> i64 {{ self.step() }}\n    fn step(&self) -> i64 {{ {i} }}\n}}\n\n")
        rs.append(f"pub fn f{i}(x: i64) -> i64 {{ {f'f{prev}(x) + S{prev}::new().run()' if i else 'x'} }}\n")
        (root / f"src/m{i}.rs").write_text("".join(rs))
        lib.append(f"pub mod m{i};\n")
        e = expected["rust"]
        e.add(("calls", f"src/m{i}.rs:S{i}.run", f"src/m{i}.rs:S{i}.step"))
        if i:
            e |= {("imports", f"src/m{i}.rs:", f"src/m{prev}.rs:"), ("calls", f"src/m{i}.rs:f{i}", f"src/m{prev}.rs:f{prev}"),
                  ("calls", f"src/m{i}.rs:f{i}", f"src/m{prev}.rs:S{prev}.new")}
        # Python
        py = [f"from py.m{prev} import f{prev}, C{prev}\n\n" if i else ""]
        py.append(f"def f{i}(x):\n    return {f'f{prev}(x) + C{prev}().run()' if i else 'x'}\n\n")
        py.append(f"class C{i}:\n    def run(self):\n        return self.step()\n\n    def step(self):\n        return {i}\n")
        (root / "py").mkdir(exist_ok=True)
        (root / f"py/m{i}.py").write_text("".join(py))
        e = expected["python"]
        e.add(("calls", f"py/m{i}.py:C{i}.run", f"py/m{i}.py:C{i}.step"))
        if i:
            e |= {("imports", f"py/m{i}.py:", f"py/m{prev}.py:"), ("calls", f"py/m{i}.py:f{i}", f"py/m{prev}.py:f{prev}"),
                  ("calls", f"py/m{i}.py:f{i}", f"py/m{prev}.py:C{prev}")}
    (root / "src/lib.rs").write_text("".join(lib))
    return expected


def run_polyglot(workdir: Path, n: int) -> dict:
    root = workdir / "polyglot"
    root.mkdir()
    expected = polyglot(root, n)
    db = open_database(workdir / "polyglot.db")
    t0 = time.perf_counter()
    report = index_path(db, root, "polyglot")
    seconds = time.perf_counter() - t0
    rows = db.reader().execute(
        "SELECT e.kind, fa.path || ':' || a.qualname, fb.path || ':' || b.qualname, fa.language FROM code_edges e "
        "JOIN code_nodes a ON a.id = e.src JOIN code_files fa ON fa.id = a.file_id "
        "JOIN code_nodes b ON b.id = e.dst JOIN code_files fb ON fb.id = b.file_id "
        "WHERE fa.project = 'polyglot' AND e.kind IN ('calls', 'imports')").fetchall()
    out = {"modules_per_language": n, "files": report.files, "cold_index_s": round(seconds, 2)}
    for language, truth in expected.items():
        got = {(r[0], r[1], r[2]) for r in rows if r[3] == language}
        out[language] = prf(got, truth)
    deep = impact(db.reader(), "ts/m0.ts:f0", project="polyglot", depth=min(n - 1, 10))
    out["ts_chain_depth_reached"] = max((d["depth"] for d in deep["dependents"]), default=0)
    db.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", action="append", default=[], help="NAME=PATH (repeatable)")
    parser.add_argument("--samples", type=int, default=200, help="impact targets per repository")
    parser.add_argument("--polyglot", type=int, default=60, help="modules per language in the generated fixture")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    result = {"python": platform.python_version(), "closure_max_depth": closure.MAX_DEPTH,
              "load_average_at_start": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(), "repos": {}}
    with tempfile.TemporaryDirectory(prefix="kenning-codegraph-bench-") as tmp:
        workdir = Path(tmp)
        result["polyglot"] = run_polyglot(workdir, args.polyglot)
        for spec in args.repo:
            name, _, path = spec.partition("=")
            result["repos"][name] = run_repo(name, Path(path).resolve(), args.samples, args.seed, workdir)
            print(json.dumps({name: {k: v for k, v in result["repos"][name].items() if k != "impact"}}),
                  file=sys.stderr)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


if __name__ == "__main__":
    main()
