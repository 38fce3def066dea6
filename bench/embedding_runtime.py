"""The bundled model's two runtimes side by side: throughput, query latency and process memory.

    .venv/bin/python bench/embedding_runtime.py --out /tmp/embedding_runtime.json
    .venv/bin/python bench/embedding_runtime.py --runtimes onnx,torch --texts 2000 --threads 1

Each runtime (`embedding.runtime`: onnx = int8 ONNX export on ONNX Runtime, torch = int8
sentence-transformers) runs in its own fresh process, built exactly as kenning builds it
(`build_embedding_provider`), on the same texts: LoCoMo turns read in place from
../shared/bench/locomo. Reported per runtime: bulk embedding (one `embed_many` of --texts turns;
wall and CPU seconds → texts/s), single-query latency (p50/p95 of --queries `embed` calls, wall
and CPU), and the process RSS after loading and after the bulk pass. CPU time is the steadier
figure on a shared machine. Baselines come from the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo_lib as L  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _timed(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def child(runtime: str, texts: list[str], queries: list[str], threads: int) -> dict:
    from kenning.core.config import EmbeddingSettings
    from kenning.providers.registry import build_embedding_provider

    rss_start = _rss_mb()
    embedder = build_embedding_provider(EmbeddingSettings(runtime=runtime, torch_threads=threads, bulk_threads=threads,
                                                          query_cache_size=0))
    load_wall, load_cpu = _timed(embedder.warm_up)
    rss_loaded = _rss_mb()
    bulk_wall, bulk_cpu = _timed(lambda: embedder.embed_many(texts))
    rss_bulk = _rss_mb()
    walls, cpus = [], []
    for q in queries:
        w, c = _timed(lambda: embedder.embed(q))
        walls.append(1000 * w)
        cpus.append(1000 * c)
    walls.sort()
    cpus.sort()
    return {
        "runtime": runtime, "model_id": embedder.model_id, "threads": threads, "texts": len(texts),
        "load_s": {"wall": round(load_wall, 2), "cpu": round(load_cpu, 2)},
        "bulk_texts_per_s": {"wall": round(len(texts) / bulk_wall, 1), "cpu": round(len(texts) / bulk_cpu, 1)},
        "query_ms": {"wall_p50": round(statistics.median(walls), 2), "wall_p95": round(walls[int(0.95 * (len(walls) - 1))], 2),
                     "cpu_p50": round(statistics.median(cpus), 2), "cpu_p95": round(cpus[int(0.95 * (len(cpus) - 1))], 2)},
        "rss_mb": {"interpreter": rss_start, "loaded": rss_loaded, "after_bulk": rss_bulk},
        "torch_imported": "torch" in sys.modules,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runtimes", default="torch,onnx", help="comma list: torch, onnx")
    ap.add_argument("--texts", type=int, default=2000, help="LoCoMo turns in the bulk pass")
    ap.add_argument("--queries", type=int, default=200, help="single-text embeds timed")
    ap.add_argument("--threads", type=int, default=1, help="torch_threads and bulk_threads (same for both runtimes)")
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "bench" / "locomo"))
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    convs = L.load_all(Path(args.data), None)
    turns = [t.content for c in convs for t in c.turns][: args.texts]
    questions = [q.question for c in convs for q in c.scored_questions()][: args.queries]
    if args.child:
        print(json.dumps(child(args.child, turns, questions, args.threads)))
        return
    results = {}
    for runtime in args.runtimes.split(","):
        proc = subprocess.run([sys.executable, __file__, "--child", runtime, "--texts", str(args.texts), "--queries",
                               str(args.queries), "--threads", str(args.threads), "--data", args.data],
                              capture_output=True, text=True, check=True)
        results[runtime] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{runtime}: {results[runtime]['bulk_texts_per_s']} texts/s, query {results[runtime]['query_ms']}, "
              f"RSS {results[runtime]['rss_mb']}", file=sys.stderr)
    text = json.dumps({"runtimes": results, "load_average": os.getloadavg(), "cpu_count": os.cpu_count(),
                       "command": " ".join(sys.argv)}, indent=2)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
