"""LoCoMo protocol B (../shared/bench/PROTOCOL.md): a per-user learned ranker replayed on each conversation.

    .venv/bin/python bench/predictor_locomo.py --convs 2 --out bench/out/predictor_locomo_quick.json
    .venv/bin/python bench/predictor_locomo.py --out bench/out/predictor_locomo.json      # all seven

In-process, not through the daemon: each conversation is ingested into its own kenning store
(the bundled embedding model, one memory per turn, as protocol A) and every category 1-4
question's candidate pool is the frozen top 50 of kenning's `hybrid` recall preset (recorded
once; every arm ranks that same pool; gold outside it is a miss for every arm). The learned
arm is kenning's own predictor code: the cross-attention scorer (`predictor.weights`, trained in numpy by
`predictor.backprop`; d = 64, 384-dim embeddings, the
17 features, project slot), trained by `kenning.predictor.train.train` (ListNet KL, Adam,
clone + canary gates + swap) exactly as the sidecar does, on Samples built with
`kenning.predictor.features` (`feature_row`, `time_features`, `hash_tokens`) plus the five
history features of `kenning.predictor.history` (issue 11), computed by its `History` from the
replay's own feedback: each past question is a session one minute after the previous one;
the memories it injected are rated 1 (gold) or 0, gold it missed is rated 1; the test part
(no feedback) sees the history of the whole past.

Replay per conversation (one conversation = one user): questions ordered by the index of
their latest evidence session (ties: file order); first 70 % = past, last 30 % = test. The
session timestamp is the conversation's last session date for every question (protocol A's
"asked after the last session"; using the evidence session's date would leak the answer
through the age feature). Past, in order: rank, inject the top 10 (baseline until a model
has been swapped in, then the fused ranking), reveal the gold: labels gold = 1, injected
non-gold = 0, not shown = 0.2 (unknown); retrain every --train-every questions on all past
samples (replay = the 20 oldest, canary = the 25 latest), swapping only when the gates pass.
α (kenning's predictor.fusion.rrf_fuse, k = 12: α·1/(12+rank_base) + (1−α)·1/(12+rank_learned); a candidate with
no history features keeps its baseline rank in both terms) is chosen on the past only:
the model trained on the first 80 % of the past ranks the last 20 % (validation), the grid
α ∈ {0, 0.1, …, 1} that maximises validation NDCG@10 is kept (ties → larger α). The test part
is ranked without feedback. Reported per conversation and pooled: NDCG@10, R@5, R@10 of
baseline (hybrid order), learned, fused, with paired sign tests; the learning curve (test
NDCG@10 of the learned arm after 0, 10, 20, 40, … past questions); the test subset whose gold
never appeared as gold in the past ("novel"); and a global control model trained on the
other conversations' past parts (slot and labels alike) evaluated on this test part.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import locomo_lib as L  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = "../shared/bench/locomo"
POOL = 50
RRF_K = 12
UNKNOWN_LABEL = 0.2
ALPHAS = [round(a * 0.1, 1) for a in range(11)]
HISTORY: dict[str, np.ndarray] = {}  # qid → [N, 5] history features as of that question
NO_OVERLAP_GATE = False  # --no-overlap-gate: diagnostic, skips the top-5 overlap gate after the first swap


# -- frozen candidate pools ---------------------------------------------------------------------
def build_pools(conv: L.Conversation, embedder) -> dict[str, Any]:
    """Ingest one conversation into a fresh store; record the hybrid top-50 per question."""
    from kenning.core.config import load_settings
    from kenning.core.types import MemoryDraft
    from kenning.retrieval.config import preset
    from kenning.service import Kenning
    from kenning.store.memories import get_memories
    from kenning.store.vectors import get_embeddings

    questions = conv.scored_questions()
    session_of = {t.dia_id: t.session for t in conv.turns}
    last_date = max(t.created_at for t in conv.turns)
    with tempfile.TemporaryDirectory(prefix=f"kenning-plocomo-{conv.name}-") as tmp:
        settings = load_settings(environ={}, home=Path(tmp))
        k = Kenning(settings, embedder=embedder).start(background=False)
        try:
            id_to_dia: dict[str, set[str]] = {}
            for i in range(0, len(conv.turns), 256):
                chunk = conv.turns[i:i + 256]
                drafts = [MemoryDraft(content=t.content, type="episodic", source="locomo", created_at=t.created_at,
                                      session_key=f"{conv.name}/session_{t.session}",
                                      metadata={"dia_id": t.dia_id, "conversation": conv.name}) for t in chunk]
                for t, res in zip(chunk, k.remember_many(drafts)):
                    id_to_dia.setdefault(res.id, set()).add(t.dia_id)
            cfg = preset("hybrid")
            conn = k.db.reader()
            items = []
            for order, q in enumerate(questions):
                hits = k.recall(q.question, limit=POOL, config=cfg, track_access=False)
                ids = [h.memory.id for h in hits]
                mems = get_memories(conn, ids)
                vecs = get_embeddings(conn, list({m.content_hash for m in mems.values()}), embedder.model_id)
                latest = max((session_of.get(g, 0) for g in q.gold), default=0)
                items.append({
                    "q": q, "order": (latest, order), "ids": ids,
                    "dia": [frozenset(id_to_dia.get(m, ())) for m in ids],
                    "mem": [mems[m].to_dict() for m in ids],
                    "vecs": [vecs.get(mems[m].content_hash) for m in ids],
                    "qvec": np.asarray(embedder.embed_query(q.question), np.float32),
                })
        finally:
            k.close()
    items.sort(key=lambda it: it["order"])
    return {"conv": conv, "items": items, "at": last_date}


def make_sample(item: dict, at_iso: str, labels: np.ndarray | None = None):
    from kenning.core.clock import parse_iso
    from kenning.predictor.features import Sample, feature_row, time_features
    from kenning.predictor.history import NO_HISTORY
    from kenning.predictor.tokens import hash_tokens

    at = parse_iso(at_iso)
    when = time_features(at, 24.0)
    base = np.array([feature_row(m, at, when, v is not None) for m, v in zip(item["mem"], item["vecs"])], np.float32)
    hist = HISTORY.get(item["q"].qid)
    if hist is None:
        hist = np.tile(np.asarray(NO_HISTORY, np.float32), (len(item["ids"]), 1))
    return Sample(session_key=item["q"].qid, ids=list(item["ids"]), ctx_vec=item["qvec"],
                  ctx_tokens=hash_tokens(item["q"].question), cand_vecs=list(item["vecs"]),
                  cand_tokens=[hash_tokens(m["content"]) if v is None else [] for m, v in zip(item["mem"], item["vecs"])],
                  features=np.concatenate([base, hist], axis=1), project_slot=0, labels=labels)


class Feedback:
    """The replay's feedback as kenning's signal events: one session per question, a minute apart."""

    def __init__(self, at_iso: str) -> None:
        from kenning.core.clock import parse_iso

        self.t0 = parse_iso(at_iso)
        self.events: list[dict] = []
        self.sessions: list[dict] = []

    def when(self, n: int) -> str:
        from datetime import timedelta

        from kenning.core.clock import to_iso

        return to_iso(self.t0 + timedelta(minutes=n))

    def features(self, item: dict, n: int) -> None:
        """Record the history features of question n (as of its start) and register its session."""
        from kenning.predictor.history import History

        qid, at = item["q"].qid, self.when(n)
        HISTORY[qid] = History.build(self.events, self.sessions).features(list(item["ids"]), at, None, exclude=qid)
        self.sessions.append({"session_key": qid, "project": None, "started_at": at})

    def reveal(self, item: dict, n: int, injected: list[int]) -> None:
        gold = gold_mask(item)
        for i in sorted(set(injected) | set(np.flatnonzero(gold).tolist())):
            self.events.append({"session_key": item["q"].qid, "memory_id": item["ids"][i], "started_at": self.when(n),
                                "agent": 1.0 if gold[i] else 0.0, "ratings": 1, "fts": 0, "touched": False})


def gold_mask(item: dict) -> np.ndarray:
    gold = set(item["q"].gold)
    return np.array([bool(d & gold) for d in item["dia"]])


def labels_for(item: dict, injected: list[int]) -> np.ndarray:
    lab = np.full(len(item["ids"]), UNKNOWN_LABEL, np.float32)
    lab[list(injected)] = 0.0
    lab[gold_mask(item)] = 1.0
    return lab


# -- ranking and metrics ------------------------------------------------------------------------
class Learned(list):
    """A learned ranking (candidate indices, best first) and `unseen`: the candidates with no
    history features (kenning.predictor.fusion: they keep their baseline rank when fused)."""

    unseen: frozenset = frozenset()


def learned_order(model, sample) -> Learned:
    from kenning.predictor.history import NO_HISTORY
    from kenning.predictor.train import score_samples

    s = score_samples(model, [sample])[0]
    out = Learned(sorted(range(len(s)), key=lambda i: (-float(s[i]), i)))
    hist = sample.features[:, -len(NO_HISTORY):]
    out.unseen = frozenset(i for i in range(len(s)) if tuple(hist[i].tolist()) == NO_HISTORY)
    return out


def fuse(base: list[int], learned: Learned, alpha: float) -> list[int]:
    """kenning's own fusion (predictor.fusion.rrf_fuse, k = 12) of the baseline and learned orders."""
    from kenning.predictor.fusion import rrf_fuse

    return [f.memory_id for f in rrf_fuse(base, learned, alpha, RRF_K, unseen=getattr(learned, "unseen", ()))]


def metrics(item: dict, order: list[int]) -> dict[str, float]:
    return L.question_metrics([item["dia"][i] for i in order], item["q"].gold)


def train_model(model, samples: list, trained: bool, seed: int):
    """One kenning training run (clone → epochs → gates); returns (model, swapped, summary)."""
    from kenning.predictor.train import TrainConfig, train

    if not samples:
        return model, False, None
    res = train(model, samples, replay=samples[:20], canary=samples[-25:],
                previous_trained=trained and not NO_OVERLAP_GATE, config=TrainConfig(seed=seed))
    summary = {"samples": len(samples), "loss": res.loss, "swapped": res.swapped, "ms": round(res.duration_ms, 1),
               "gates": {k: v for k, v in res.gates.items() if k != "reason"}}
    return (res.model if res.swapped else model), res.swapped, summary


def fresh_model(seed: int):
    from kenning.predictor.weights import ScorerConfig, initial

    return initial(ScorerConfig(native_dim=384, seed=seed))


def replay_past(pools: dict, past: list[dict], args, checkpoints: set[int], on_checkpoint) -> tuple:
    """Replay the past in order; returns (model, samples, trainings). Calls on_checkpoint(n, model)."""
    model, trained, samples, trainings = fresh_model(args.seed), False, [], []
    feedback = Feedback(pools["at"])
    on_checkpoint(0, model, trained)
    for n, item in enumerate(past, 1):
        feedback.features(item, n)
        base = list(range(len(item["ids"])))
        order = fuse(base, learned_order(model, make_sample(item, pools["at"])), 0.5) if trained else base
        samples.append(make_sample(item, pools["at"], labels_for(item, order[:10])))
        feedback.reveal(item, n, order[:10])
        if n % args.train_every == 0 or n == len(past):
            model, swapped, summary = train_model(model, samples, trained, args.seed + n)
            trained = trained or swapped
            if summary:
                trainings.append({"after": n, **summary})
        if n in checkpoints:
            on_checkpoint(n, model, trained)
    return model, trained, samples, trainings, feedback


def mean(xs: list[float]) -> float:
    return round(float(np.mean(xs)), 4) if xs else 0.0


def evaluate(items: list[dict], orders: dict[str, list[list[int]]]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(items)}
    per = {arm: [metrics(it, o) for it, o in zip(items, ords)] for arm, ords in orders.items()}
    for arm, rows in per.items():
        out[arm] = {m: mean([r[m] for r in rows]) for m in ("ndcg@10", "recall@5", "recall@10")}
    for arm in orders:
        if arm != "baseline":
            out[arm]["sign_vs_baseline_ndcg@10"] = L.sign_test([r["ndcg@10"] for r in per[arm]],
                                                               [r["ndcg@10"] for r in per["baseline"]])
    out["_per_question"] = per
    return out


def run_conversation(pools: dict, args, global_model=None) -> dict[str, Any]:
    items = pools["items"]
    n_past = int(round(len(items) * 0.7))
    past, test = items[:n_past], items[n_past:]
    n_fit = int(round(n_past * 0.8))
    base_orders = [list(range(len(it["ids"]))) for it in test]
    curve_points = {0, 10, 20} | {10 * 2 ** i for i in range(1, 10) if 10 * 2 ** i < n_past} | {n_past}
    curve: dict[int, float] = {}
    val_state: dict[str, Any] = {}

    models_at: dict[int, Any] = {}  # training never mutates a model in place: references suffice

    def on_checkpoint(n: int, model, trained: bool) -> None:
        if n in curve_points:
            models_at[n] = model
        if n == n_fit:
            val_state["model"] = model

    t0 = time.perf_counter()
    model, trained, _, trainings, feedback = replay_past(pools, past, args, curve_points | {n_fit}, on_checkpoint)
    train_s = time.perf_counter() - t0
    for j, it in enumerate(test, n_past + 1):  # ranked without feedback: the whole past's history
        feedback.features(it, j)
    test_samples = [make_sample(it, pools["at"]) for it in test]
    for n, m in models_at.items():
        curve[n] = mean([metrics(it, learned_order(m, s))["ndcg@10"] for it, s in zip(test, test_samples)])
    val = past[n_fit:]
    val_model = val_state.get("model", model)
    alpha, val_scores = choose_alpha(val, val_model, pools["at"])
    learned = [learned_order(model, s) for s in test_samples]
    orders = {"baseline": base_orders, "learned": learned,
              "fused": [fuse(b, lo, alpha) for b, lo in zip(base_orders, learned)]}
    global_alpha = None
    if global_model is not None:
        g_learned = [learned_order(global_model, s) for s in test_samples]
        global_alpha, _ = choose_alpha(val, global_model, pools["at"])
        orders["global_learned"] = g_learned
        orders["global_fused"] = [fuse(b, lo, global_alpha) for b, lo in zip(base_orders, g_learned)]
    result = evaluate(test, orders)
    past_gold = {g for it in past for g in it["q"].gold}
    novel = [i for i, it in enumerate(test) if not set(it["q"].gold) & past_gold]
    result["novel"] = evaluate([test[i] for i in novel], {a: [o[i] for i in novel] for a, o in orders.items()})
    result["novel"].pop("_per_question")
    result.update(conversation=pools["conv"].name, past=n_past, validation=len(val), alpha=alpha,
                  global_alpha=global_alpha, validation_ndcg_by_alpha=val_scores,
                  gold_in_pool_test=mean([float(gold_mask(it).any()) for it in test]),
                  learning_curve={str(k): v for k, v in sorted(curve.items())},
                  trainings=trainings, swaps=sum(1 for t in trainings if t["swapped"]), train_s=round(train_s, 1))
    return result


def choose_alpha(val: list[dict], model, at: str) -> tuple[float, dict[str, float]]:
    if not val:
        return 1.0, {}
    learned = [learned_order(model, make_sample(it, at)) for it in val]
    scores = {}
    for a in ALPHAS:
        scores[str(a)] = mean([metrics(it, fuse(list(range(len(it["ids"]))), lo, a))["ndcg@10"]
                               for it, lo in zip(val, learned)])
    best = max(ALPHAS, key=lambda a: (scores[str(a)], a))
    return best, scores


def train_global(all_pools: list[dict], exclude: str, args):
    """The control: one model trained on the other conversations' past parts (baseline-injected labels)."""
    samples = []
    for pools in all_pools:
        if pools["conv"].name == exclude:
            continue
        past = pools["items"][:int(round(len(pools["items"]) * 0.7))]
        samples += [make_sample(it, pools["at"], labels_for(it, list(range(min(10, len(it["ids"])))))) for it in past]
    model, trained = fresh_model(args.seed), False
    for _ in range(2):  # two gated runs, as the sidecar would after a retrain
        model, swapped, _ = train_model(model, samples, trained, args.seed)
        trained = trained or swapped
    return model


def pooled(results: list[dict], arms: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": sum(r["n"] for r in results)}
    per = {a: [q for r in results for q in r["_per_question"][a]] for a in arms}
    for a in arms:
        out[a] = {m: mean([q[m] for q in per[a]]) for m in ("ndcg@10", "recall@5", "recall@10")}
        if a != "baseline":
            out[a]["sign_vs_baseline_ndcg@10"] = L.sign_test([q["ndcg@10"] for q in per[a]],
                                                             [q["ndcg@10"] for q in per["baseline"]])
    if "learned" in arms:
        out["fused_vs_learned_ndcg@10"] = L.sign_test([q["ndcg@10"] for q in per["fused"]],
                                                       [q["ndcg@10"] for q in per["learned"]])
    nov = [r["novel"] for r in results if r["novel"]["n"]]
    out["novel"] = {"n": sum(r["n"] for r in nov)}
    for a in arms:
        out["novel"][a] = {"ndcg@10": mean([r[a]["ndcg@10"] for r in nov for _ in range(r["n"])])}
    return out


def print_table(report: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    arms = report["arms"]
    t = Table(title="LoCoMo protocol B: test NDCG@10 / R@5 / R@10 (last 30 % of each conversation)")
    for h in ["conversation", "n", "α", "swaps", *arms]:
        t.add_column(h, justify="right")
    rows = [*report["conversations"], {"conversation": "POOLED", **report["pooled"], "alpha": "", "swaps": ""}]
    for r in rows:
        t.add_row(r["conversation"], str(r["n"]), str(r["alpha"]), str(r["swaps"]),
                  *[f"{r[a]['ndcg@10']:.3f} / {r[a]['recall@5']:.3f} / {r[a]['recall@10']:.3f}" for a in arms])
    c = Console(stderr=True, width=200)
    c.print(t)
    p = report["pooled"]
    for a in arms[1:]:
        c.print(f"{a} vs baseline NDCG@10 sign test: {p[a]['sign_vs_baseline_ndcg@10']}")
    c.print(f"novel-gold test subset (n={p['novel']['n']}): " + ", ".join(
        f"{a} {p['novel'][a]['ndcg@10']:.3f}" for a in arms))
    for r in report["conversations"]:
        c.print(f"learning curve {r['conversation']}: {r['learning_curve']}")


def main() -> None:
    ap = argparse.ArgumentParser(description="LoCoMo protocol B: per-user learned ranker replay")
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--convs", type=int, default=None, help="first N conversations only")
    ap.add_argument("--train-every", type=int, default=10, help="retrain every N past questions (kenning: 10)")
    ap.add_argument("--no-global", action="store_true", help="skip the global (other conversations) control")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pool-cache", default=None,
                    help="pickle the frozen pools here (outside the repo) and reuse them on later runs")
    ap.add_argument("--no-overlap-gate", action="store_true",
                    help="diagnostic: skip the top-5 overlap gate (it blocks most retrains after the first swap)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    import numpy
    from kenning.core.config import load_settings
    from kenning.providers.registry import build_embedding_provider

    global NO_OVERLAP_GATE
    NO_OVERLAP_GATE = args.no_overlap_gate
    data = Path(args.data)
    if not data.is_absolute():
        data = (REPO / data).resolve()
    convs = L.load_all(data, args.convs)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        emb_settings = load_settings(environ={}, home=Path(tmp)).embedding
    embedder = build_embedding_provider(emb_settings)
    cache = Path(args.pool_cache) if args.pool_cache else None
    cached = pickle.loads(cache.read_bytes()) if cache and cache.exists() else {}
    all_pools = []
    for conv in convs:
        if conv.name not in cached:
            cached[conv.name] = build_pools(conv, embedder)
            if cache:
                cache.write_bytes(pickle.dumps(cached))
        all_pools.append(cached[conv.name])
        print(f"[{time.perf_counter() - t0:6.0f}s] pools {conv.name}: {len(all_pools[-1]['items'])} questions",
              file=sys.stderr, flush=True)
    pools_s = time.perf_counter() - t0
    use_global = not args.no_global and len(all_pools) > 1
    results = []
    for pools in all_pools:
        g = train_global(all_pools, pools["conv"].name, args) if use_global else None
        results.append(run_conversation(pools, args, g))
        r = results[-1]
        print(f"[{time.perf_counter() - t0:6.0f}s] {r['conversation']}: base {r['baseline']['ndcg@10']:.3f} "
              f"learned {r['learned']['ndcg@10']:.3f} fused {r['fused']['ndcg@10']:.3f} α={r['alpha']}",
              file=sys.stderr, flush=True)
    arms = ["baseline", "learned", "fused"] + (["global_learned", "global_fused"] if use_global else [])
    report = {
        "benchmark": "predictor_locomo (protocol B)", "driven": "in-process (kenning.predictor model/train on frozen "
        "top-50 hybrid pools), not through the daemon",
        "embedding_model": embedder.model_id, "numpy": numpy.__version__, "arms": arms,
        "config": {"pool": POOL, "rrf_k": RRF_K, "train_every": args.train_every, "unknown_label": UNKNOWN_LABEL,
                   "alphas": ALPHAS, "seed": args.seed,
                   "overlap_gate": not args.no_overlap_gate, "conversations": [c.name for c in convs]},
        "pooled": pooled(results, arms),
        "conversations": [{k: v for k, v in r.items() if k != "_per_question"} for r in results],
        "timing_s": {"pools": round(pools_s, 1), "total": round(time.perf_counter() - t0, 1)},
        "notes": ["gold ids naming no turn (conv-42 D10:19, conv-47 D4:36) are kept and cap recall",
                  "gold outside the frozen top-50 pool is a miss for every arm"],
    }
    text = json.dumps(report, indent=2, default=str)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    print(json.dumps({k: report[k] for k in ("pooled", "timing_s", "arms")}, default=str))
    print_table(report)


if __name__ == "__main__":
    main()
