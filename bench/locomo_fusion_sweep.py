"""Why hybrid lands where it does on LoCoMo protocol A: one pass collects each leg's top
--pool candidates per question from kenning's own store (FTS5 BM25 with and without stop
words, vector KNN), then weighted RRF (kenning.retrieval.fusion.weighted_rrf) and a
min-max score blend are replayed offline over a grid of rrf_k and leg weights. Weights
are also chosen leave-one-conversation-out so the headline number is not tuned on the
conversation it is scored on.

    .venv/bin/python bench/locomo_fusion_sweep.py --out /tmp/fusion_sweep.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo_lib as L  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
K_GRID = (1, 3, 5, 10, 20, 30, 60, 100)
VSHARE_GRID = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0)  # vector weight / (bm25 + vector)


def collect(convs, pool: int, batch: int) -> dict[str, list[dict]]:
    from kenning.core.config import load_settings
    from kenning.core.types import MemoryDraft, MemoryFilter
    from kenning.providers.registry import build_embedding_provider
    from kenning.service import Kenning
    from kenning.store.search import bm25_search, fts_query, vector_search
    from kenning.store.memories import filter_sql

    with tempfile.TemporaryDirectory() as tmp:
        emb = build_embedding_provider(load_settings(environ={}, home=Path(tmp)).embedding)
    emb.warm_up()
    # Build one service up front: Kenning imports its workers lazily on first construction, and
    # doing that once here keeps a long run independent of later edits to the tree.
    with tempfile.TemporaryDirectory() as tmp:
        from kenning.service import Kenning as _K
        _K(load_settings(environ={}, home=Path(tmp)), embedder=emb).close()
    out: dict[str, list[dict]] = {}
    for conv in convs:
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            k = Kenning(load_settings(environ={}, home=Path(tmp)), embedder=emb).start(background=False)
            try:
                id_to_dia: dict[str, set[str]] = {}
                for i in range(0, len(conv.turns), batch):
                    chunk = conv.turns[i : i + batch]
                    res = k.remember_many([MemoryDraft(content=t.content, type="episodic", created_at=t.created_at,
                                                       metadata={"dia_id": t.dia_id}) for t in chunk])
                    for t, r in zip(chunk, res):
                        id_to_dia.setdefault(r.id, set()).add(t.dia_id)
                conn = k.db.reader()
                where, params = filter_sql(MemoryFilter())
                ref = L.ReferenceBM25([t.content for t in conv.turns])
                dia_to_id = {d: mid for mid, ds in id_to_dia.items() for d in ds}
                rows = []
                for q in conv.scored_questions():
                    def fts(match: str) -> list[tuple[str, float]]:
                        if not match:
                            return []
                        r = conn.execute(
                            "SELECT m.id, -bm25(memories_fts) FROM memories_fts JOIN memories m ON m.rid = memories_fts.rowid"
                            f" WHERE memories_fts MATCH ? AND {where} ORDER BY bm25(memories_fts) LIMIT ?",
                            [match, *params, pool]).fetchall()
                        return [(a, float(b)) for a, b in r]

                    qv = emb.embed_query(q.question)
                    ref_scores = ref.scores(q.question)
                    ref_top = sorted(ref_scores, key=lambda i: (-ref_scores[i], i))[:pool]
                    rows.append({
                        "qid": q.qid, "category": q.category, "gold": list(q.gold),
                        "bm25": bm25_search(conn, q.question, None, pool),
                        "bm25_all_words": fts(fts_query(q.question, drop_stop_words=False)),
                        "vector": vector_search(conn, qv, emb.model_id, None, pool),
                        "reference_bm25": [(dia_to_id[conv.turns[i].dia_id], ref_scores[i]) for i in ref_top
                                           if conv.turns[i].dia_id in dia_to_id],
                        "_map": None,
                    })
                for r in rows:
                    r["_map"] = {mid: sorted(id_to_dia[mid]) for leg in ("bm25", "bm25_all_words", "vector", "reference_bm25")
                                 for mid, _ in r[leg]}
                out[conv.name] = rows
            finally:
                k.close()
        print(f"{conv.name}: {len(out[conv.name])} questions, {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return out


def score_ranked(row, ranked_ids: list[str]) -> dict[str, float]:
    ranked = [frozenset(row["_map"][m]) for m in ranked_ids[:10]]
    return L.question_metrics(ranked, row["gold"])


def rrf(row, legs: dict[str, float], k: int) -> list[str]:
    from kenning.retrieval.fusion import weighted_rrf

    return [h.memory_id for h in weighted_rrf({n: row[n] for n in legs}, legs, k)[:10]]


def blend(row, legs: dict[str, float]) -> list[str]:
    """Min-max normalised score sum (CombSUM); absent = 0."""
    total: dict[str, float] = {}
    for n, w in legs.items():
        hits = row[n]
        if not hits:
            continue
        lo, hi = min(s for _, s in hits), max(s for _, s in hits)
        for mid, s in hits:
            total[mid] = total.get(mid, 0.0) + w * ((s - lo) / (hi - lo) if hi > lo else 1.0)
    return [m for m, _ in sorted(total.items(), key=lambda x: (-x[1], x[0]))[:10]]


def evaluate(rows_by_conv, method) -> dict[str, Any]:
    rows = [(r["category"], score_ranked(r, method(r))) for rs in rows_by_conv.values() for r in rs]
    return L.aggregate(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/bench/locomo")
    ap.add_argument("--pool", type=int, default=100)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--bm25-leg", default="bm25", choices=("bm25", "bm25_all_words", "reference_bm25"))
    ap.add_argument("--cache", default=None, help="save/load collected legs (JSON) here")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    data = Path(args.data)
    if not data.is_absolute():
        data = (REPO / data).resolve()
    if args.cache and Path(args.cache).exists():
        collected = json.loads(Path(args.cache).read_text())
    else:
        collected = collect(L.load_all(data, args.limit), args.pool, args.batch)
        if args.cache:
            Path(args.cache).write_text(json.dumps(collected))

    def r10(res):
        return round(100 * res["overall"]["recall@10"], 2)

    b = args.bm25_leg
    report: dict[str, Any] = {"single_legs": {}, "rrf_grid": {}, "blend_grid": {}, "loco": {}}
    for leg in ("bm25", "bm25_all_words", "reference_bm25", "vector"):
        report["single_legs"][leg] = evaluate(collected, lambda r, leg=leg: [m for m, _ in r[leg]])
    for k in K_GRID:
        for v in VSHARE_GRID:
            res = evaluate(collected, lambda r, k=k, v=v: rrf(r, {b: 1 - v, "vector": v}, k))
            report["rrf_grid"][f"k={k},v={v}"] = {"recall@10": r10(res), "ndcg@10": round(100 * res["overall"]["ndcg@10"], 2),
                                                  "by_category_recall@10": {c: round(100 * x["recall@10"], 1)
                                                                            for c, x in res["by_category"].items()}}
    for v in VSHARE_GRID:
        res = evaluate(collected, lambda r, v=v: blend(r, {b: 1 - v, "vector": v}))
        report["blend_grid"][f"v={v}"] = {"recall@10": r10(res), "ndcg@10": round(100 * res["overall"]["ndcg@10"], 2)}

    # leave-one-conversation-out choice of (k, v) for RRF
    loco_rows = []
    choices = {}
    for held in collected:
        train = {c: rs for c, rs in collected.items() if c != held}
        best = max(((k, v) for k in K_GRID for v in VSHARE_GRID),
                   key=lambda kv: evaluate(train, lambda r: rrf(r, {b: 1 - kv[1], "vector": kv[1]}, kv[0]))["overall"]["recall@10"])
        choices[held] = {"k": best[0], "v": best[1]}
        for r in collected[held]:
            loco_rows.append((r["category"], score_ranked(r, rrf(r, {b: 1 - best[1], "vector": best[1]}, best[0]))))
    report["loco"] = {"choices": choices, "result": L.aggregate(loco_rows)}

    print(f"single legs R@10: " + ", ".join(f"{n} {r10(x)}" for n, x in report["single_legs"].items()), file=sys.stderr)
    print("RRF grid (R@10, rows k, cols vector share):", file=sys.stderr)
    print("k\\v " + " ".join(f"{v:>5}" for v in VSHARE_GRID), file=sys.stderr)
    for k in K_GRID:
        print(f"{k:>4} " + " ".join(f"{report['rrf_grid'][f'k={k},v={v}']['recall@10']:5.1f}" for v in VSHARE_GRID), file=sys.stderr)
    print("blend: " + " ".join(f"{v}:{x['recall@10']}" for v, x in report["blend_grid"].items()), file=sys.stderr)
    print(f"LOCO RRF: R@10 {r10(report['loco']['result'])} choices {choices}", file=sys.stderr)
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
