"""KNN over the in-memory vector matrix: the store's numpy float32 index against the torch float16
matrix it replaced (issue 16: the daemon no longer imports torch), at growing sizes.

    .venv/bin/python bench/vector_index.py --sizes 10000,100000 --out /tmp/vector_index.json

Real store path for "numpy": a SQLite file gets N unit vectors (384 dims, seeded random) through
`store.vectors.upsert_embedding`, then `store.vectors.knn` answers --queries queries (the first one
loads the matrix, then each query pays the freshness probe + scan). Baseline "torch_fp16": the
previous implementation's kernel (float16 matrix, one matrix-vector product, topk) on the same
vectors. Per query: CPU and wall ms p50/p95, both on one thread; plus matrix bytes and the
top-10 agreement between the two.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DIMS = 384


def _stats(samples: list[float]) -> dict[str, float]:
    samples = sorted(samples)
    return {"p50": round(statistics.median(samples), 3), "p95": round(samples[int(0.95 * (len(samples) - 1))], 3)}


def _time(fn, queries) -> tuple[dict, dict, list]:
    cpu, wall, out = [], [], []
    for q in queries:
        c, w = time.process_time(), time.perf_counter()
        out.append(fn(q))
        cpu.append(1000 * (time.process_time() - c))
        wall.append(1000 * (time.perf_counter() - w))
    return _stats(cpu), _stats(wall), out


def run_size(n: int, n_queries: int, seed: int) -> dict:
    from kenning.store.db import open_database
    from kenning.store.vectors import knn, upsert_embedding

    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, DIMS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[rng.choice(n, n_queries, replace=False)] + 0.05 * rng.standard_normal((n_queries, DIMS)).astype(np.float32)
    hashes = [f"h{i:07d}" for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        db = open_database(Path(tmp) / "bench.db")
        for start in range(0, n, 5000):
            with db.with_write_tx() as conn:
                for i in range(start, min(n, start + 5000)):
                    upsert_embedding(conn, hashes[i], "bench", vectors[i])
        conn = db.reader()
        knn(conn, queries[0], "bench", 10)  # loads the matrix
        np_cpu, np_wall, np_top = _time(lambda q: [h for h, _ in knn(conn, q, "bench", 10)], queries)
        db.close()
    result = {"size": n, "numpy_f32": {"cpu_ms": np_cpu, "wall_ms": np_wall, "matrix_mb": round(n * DIMS * 4 / 2**20, 1)}}
    try:
        import torch
    except ImportError:
        return result
    torch.set_num_threads(1)
    matrix = torch.from_numpy(vectors.astype(np.float16))

    def torch_knn(q):
        sims = (matrix @ torch.from_numpy((q / np.linalg.norm(q)).astype(np.float16))).float()
        return [hashes[i] for i in torch.topk(sims, 10).indices.tolist()]

    torch_knn(queries[0])
    t_cpu, t_wall, t_top = _time(torch_knn, queries)
    overlap = statistics.mean(len(set(a) & set(b)) / 10 for a, b in zip(np_top, t_top))
    result["torch_fp16"] = {"cpu_ms": t_cpu, "wall_ms": t_wall, "matrix_mb": round(n * DIMS * 2 / 2**20, 1)}
    result["top10_agreement"] = round(overlap, 4)
    result["numpy_over_torch_cpu_p50"] = round(np_cpu["p50"] / max(t_cpu["p50"], 1e-9), 2)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    results = [run_size(int(n), args.queries, args.seed) for n in args.sizes.split(",")]
    for r in results:
        print(f"{r['size']:,}: numpy {r['numpy_f32']['cpu_ms']} ms CPU vs torch fp16 {r.get('torch_fp16', {}).get('cpu_ms')}",
              file=sys.stderr)
    text = json.dumps({"sizes": results, "blas_threads_env": {k: v for k, v in os.environ.items() if k.endswith("NUM_THREADS")},
                       "load_average": os.getloadavg(), "command": " ".join(sys.argv)}, indent=2)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
