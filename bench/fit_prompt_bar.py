"""Fit the prompt bar's calibrator (issue 32): logistic regression over the prompt candidates' features.

    .venv/bin/python bench/fit_prompt_bar.py --data /tmp/cands_101.jsonl --holdout /tmp/cands_102.jsonl \
        --write src/kenning/sessions/prompt_bar_model.py --out /tmp/fit.json

Data: `prompt_candidates` rows with the simulator's label, written by `bench/task_sim.py --dump-candidates`
(a development run with `sessions.ranking.prompt_min_probability: 0`, so every candidate recall found is
recorded, not only those a bar let through). Nothing outside these development runs is read.

The model: L2-regularised logistic regression (scikit-learn, C=1) on `sessions.prompt_bar.FEATURES`, fitted
on --data; its reliability (10 bins of predicted probability: count, mean predicted, observed share needed),
Brier score and log loss are reported on --holdout (another seed's world) and on the training data; and, for
a few bars, the precision and recall of the candidates at or above it. --write emits the coefficients as
`sessions/prompt_bar_model.py`, with the data, the command and the holdout's bins in its docstring.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from kenning.sessions.prompt_bar import FEATURES, SET_MEMBER_FLOOR, probability, with_interactions  # noqa: E402

SET_FEATURES = ("log_k", "p_any", "agree")  # sessions.prompt_bar.set_features
SET_K = 8  # tops of 1..SET_K per pool are the set model's rows (the runtime caps k lower: prompt_set_max)
NEAR_COPY, RAW_COVER = 0.95, 0.8  # sessions.ranking.prompt_near_copy / raw_cover_similarity defaults
SET_BAR = 0.95  # sessions.ranking.prompt_set_probability's default: what the cross-validation reports at


def read_text(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def eligible(features: dict[str, float]) -> bool:
    """Whether the bar judges this candidate at all: the rules before the probability (prompt_bar.select, at the
    default settings) leave out a near-copy of what the session showed and a raw exchange a distilled memory
    covers — their label says nothing about the bar."""
    return features.get("near_shown", 0.0) < NEAR_COPY and not (
        features.get("raw") and features.get("covered", 0.0) >= RAW_COVER)


def load(paths: list[Path], only_eligible: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rows = [json.loads(line) for p in paths for line in read_text(p).splitlines() if line.strip()]
    rows = [r for r in rows if eligible(r["features"]) or not only_eligible]
    feats = [with_interactions(r["features"]) for r in rows]  # rows recorded before an interaction was added
    x = np.array([[float(f.get(name, 0.0)) for name in FEATURES] for f in feats], dtype=np.float64)
    y = np.array([1 if r["needed"] else 0 for r in rows], dtype=np.int64)
    return x, y


def reliability(p: np.ndarray, y: np.ndarray, bins: int = 10) -> list[dict]:
    out = []
    for i in range(bins):
        lo, hi = i / bins, (i + 1) / bins
        mask = (p >= lo) & ((p < hi) if i < bins - 1 else (p <= hi))
        n = int(mask.sum())
        out.append({"bin": f"{lo:.1f}-{hi:.1f}", "n": n,
                    "predicted": round(float(p[mask].mean()), 4) if n else None,
                    "observed": round(float(y[mask].mean()), 4) if n else None})
    return out


def scores(p: np.ndarray, y: np.ndarray) -> dict:
    eps = 1e-9
    ece = sum(abs(float(p[m].mean()) - float(y[m].mean())) * int(m.sum())
              for i in range(10) if (m := (p >= i / 10) & ((p < (i + 1) / 10) if i < 9 else (p <= 1.0))).any()) / len(y)
    bars = {}
    for bar in (0.3, 0.4, 0.5, 0.6, 0.7):
        kept = p >= bar
        bars[str(bar)] = {"kept": int(kept.sum()),
                          "precision": round(float(y[kept].mean()), 4) if kept.any() else None,
                          "recall_of_needed_candidates": round(float(y[kept].sum() / max(1, y.sum())), 4)}
    return {"n": int(len(y)), "positives": int(y.sum()), "base_rate": round(float(y.mean()), 4),
            "brier": round(float(np.mean((p - y) ** 2)), 4),
            "log_loss": round(float(-np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))), 4),
            "ece": round(ece, 4), "reliability": reliability(p, y), "bars": bars}


def render(intercept: float, weights: dict[str, float], doc: str, set_model: tuple[float, dict[str, float]]) -> str:
    lines = ['"""' + doc.rstrip() + '\n"""', "", f"INTERCEPT: float = {intercept!r}",
             "WEIGHTS: dict[str, float] = {"]
    lines += [f"    {name!r}: {w!r}," for name, w in weights.items()]
    lines += ["}", "", "# the set model of a precise first prompt (prompt_bar.set_probability): P(top k holds a needed one)",
              f"SET_INTERCEPT: float = {set_model[0]!r}", "SET_WEIGHTS: dict[str, float] = {"]
    lines += [f"    {name!r}: {w!r}," for name, w in set_model[1].items()]
    lines += ["}", ""]
    return "\n".join(lines)


# -- the set model: a precise first prompt's top k ---------------------------------------------------------
def family(session_key: str) -> str:
    """The dev split's task family ('task-boltons-tagmerge-amended-001' -> 'tagmerge'): one policy, its twins."""
    parts = session_key.removeprefix("task-").split("-")
    return parts[1] if len(parts) > 1 else session_key


def set_rows(paths: list[Path], weights: dict[str, float], intercept: float) -> list[dict]:
    """One row per (first-prompt pool, k): the set features of the pool's top k (recall order, without what
    the rules before the probability leave out: a near-copy of what was shown, a raw exchange a distilled
    memory covers) and whether it holds a needed memory. p is the per-candidate model fitted with it."""
    pools: dict[str, list[dict]] = {}  # one pool per dump and task (each dump is a run of its own store)
    for n, p in enumerate(paths):
        for line in read_text(p).splitlines():
            if line.strip() and (r := json.loads(line))["prompt_index"] == 1:
                pools.setdefault(f"{n}:{r['session_key']}", []).append(r)
    out = []
    for key, rows in sorted(pools.items()):
        members = [r for r in sorted(rows, key=lambda r: r["recall_rank"])
                   if eligible(r["features"])]
        miss, held, agree = 1.0, False, 0.0
        for k, r in enumerate(members[:SET_K], 1):
            p_k = probability(with_interactions(r["features"]), weights, intercept)
            miss *= 1.0 - p_k
            held = held or bool(r["needed"])
            agree += r["features"].get("both_legs", 0.0)
            out.append({"session_key": key, "family": family(key.split(":", 1)[1]), "k": k, "log_k": math.log(k), "p_any": 1.0 - miss,
                        "agree": agree / k, "held": held, "p_k": p_k, "needed_k": bool(r["needed"])})
    return out


def fit_set(rows: list[dict], c: float) -> tuple[float, dict[str, float]]:
    x = np.array([[r[f] for f in SET_FEATURES] for r in rows])
    y = np.array([1 if r["held"] else 0 for r in rows])
    model = LogisticRegression(C=c, max_iter=5000).fit(x, y)
    return round(float(model.intercept_[0]), 5), {f: round(float(w), 5) for f, w in zip(SET_FEATURES, model.coef_[0])}


def set_predict(model: tuple[float, dict[str, float]], row: dict) -> float:
    return probability(row, model[1], model[0])


def set_report(rows: list[dict], model: tuple[float, dict[str, float]], c: float, k_max: int,
               floor: float = SET_MEMBER_FLOOR) -> dict:
    """The set model's reliability in-sample and cross-validated by family (each family's pools predicted by a
    model fitted on the other families), and what the rule would show at SET_BAR: per pool the smallest
    k <= k_max reaching it, whether that top held a needed memory, and what is left of it with its members
    below `floor` held out (the runtime's SET_MEMBER_FLOOR)."""
    cv_p = {}
    for fam in sorted({r["family"] for r in rows}):
        held_out = fit_set([r for r in rows if r["family"] != fam], c)
        cv_p.update({(r["session_key"], r["k"]): set_predict(held_out, r) for r in rows if r["family"] == fam})

    def rule(predict) -> dict:
        """Per pool the rule's top (k) and, with its members below `floor` held out (prompt_bar.held_above_floor),
        what is shown (shown) and whether that still holds a needed memory (held_above_floor)."""
        pools: dict[str, list[dict]] = {}
        for r in rows:
            pools.setdefault(r["session_key"], []).append(r)
        picks = {}
        for key, rs in pools.items():
            ordered = sorted(rs, key=lambda r: r["k"])
            chosen = next((r for r in ordered if r["k"] <= k_max and predict(r) >= SET_BAR), None)
            kept = [r for r in ordered[:chosen["k"]] if r["p_k"] >= floor] if chosen else []
            picks[key] = {"k": chosen["k"] if chosen else 0, "held": bool(chosen and chosen["held"]),
                          "shown": len(kept), "held_above_floor": any(r["needed_k"] for r in kept)}
        n = max(1, len(picks))
        return {"pools": len(picks), "held": round(sum(p["held"] for p in picks.values()) / n, 4),
                "mean_k": round(sum(p["k"] for p in picks.values()) / n, 2), "floor": floor,
                "held_above_floor": round(sum(p["held_above_floor"] for p in picks.values()) / n, 4),
                "mean_shown_above_floor": round(sum(p["shown"] for p in picks.values()) / n, 2), "per_pool": picks}

    p_in = np.array([set_predict(model, r) for r in rows])
    p_cv = np.array([cv_p[(r["session_key"], r["k"])] for r in rows])
    y = np.array([1 if r["held"] else 0 for r in rows])
    by_k = {k: round(float(y[np.array([r["k"] == k for r in rows])].mean()), 4) for k in sorted({r["k"] for r in rows})}
    return {"rows": len(rows), "pools": len({r["session_key"] for r in rows}),
            "families": len({r["family"] for r in rows}), "held_at_k": by_k, "bar": SET_BAR, "k_max": k_max,
            "in_sample": {**scores(p_in, y), "rule": rule(lambda r: set_predict(model, r))},
            "cross_validated_by_family": {**scores(p_cv, y), "rule": rule(lambda r: cv_p[(r["session_key"], r["k"])])}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, nargs="+", required=True)
    ap.add_argument("--holdout", type=Path, nargs="*", default=[])
    ap.add_argument("--c", type=float, default=1.0, help="the per-candidate model's inverse L2 strength")
    ap.add_argument("--set-c", type=float, default=1.0, help="the set model's (58 pools: it needs little)")
    ap.add_argument("--balance", action="store_true", help="weight each --data file as much as the largest")
    ap.add_argument("--eligible", action="store_true",
                    help="fit and score only candidates the bar judges (not near-copies, not covered raw exchanges)")
    ap.add_argument("--set-data", type=Path, nargs="+", required=True,
                    help="first-prompt pools of precise prompts (bench/coding_memory.py --dump-candidates): the set model")
    ap.add_argument("--set-k-max", type=int, default=5, help="the runtime's prompt_set_max, for the rule's report")
    ap.add_argument("--set-floor", type=float, default=SET_MEMBER_FLOOR,
                    help="the runtime's SET_MEMBER_FLOOR, for the rule's report: set members below it are held out")
    ap.add_argument("--write", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    parts = [load([p], args.eligible) for p in args.data]
    x, y = np.vstack([px for px, _ in parts]), np.concatenate([py for _, py in parts])
    # each development source counts as much as the largest (--balance): the dev split's 30 coding tasks would
    # otherwise weigh nothing beside the simulation's thousands of candidates
    largest = max(len(py) for _, py in parts)
    weights_of = np.concatenate([np.full(len(py), largest / len(py) if args.balance else 1.0) for _, py in parts])
    # a feature the data never varies (same_project: every development candidate is of the session's project)
    # says nothing; fitted anyway it would only split the intercept and move unseen cases (a global memory) at will
    varied = [i for i in range(x.shape[1]) if np.ptp(x[:, i]) > 0]
    model = LogisticRegression(C=args.c, max_iter=5000)
    model.fit(x[:, varied], y, sample_weight=weights_of)
    fitted = dict(zip(varied, model.coef_[0]))
    weights = {f: round(float(fitted.get(i, 0.0)), 5) for i, f in enumerate(FEATURES)}
    intercept = round(float(model.intercept_[0]), 5)

    def predict(xs: np.ndarray) -> np.ndarray:
        z = intercept + xs @ np.array([weights[f] for f in FEATURES])
        return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))

    report = {"features": list(FEATURES), "intercept": intercept, "weights": weights, "c": args.c,
              "data": [str(p) for p in args.data], "holdout": [str(p) for p in args.holdout],
              "train": scores(predict(x), y),
              "train_by_source": {str(p): scores(predict(px), py) for p, (px, py) in zip(args.data, parts)}}
    if args.holdout:
        def committed(xs: np.ndarray) -> np.ndarray:  # the model this fit replaces (prompt_bar_model)
            return np.array([probability(dict(zip(FEATURES, row))) for row in xs])

        hx, hy = load(args.holdout, args.eligible)
        report["holdout_scores"] = scores(predict(hx), hy)
        report["holdout_scores_committed"] = scores(committed(hx), hy)  # before -> after, the same rows
        ax, ay = load(args.holdout)  # every candidate, as bench/task_sim.py's live calibration counts them
        report["holdout_all_candidates"] = {"fitted": scores(predict(ax), ay), "committed": scores(committed(ax), ay)}
    srows = set_rows(args.set_data, weights, intercept)
    set_model = fit_set(srows, args.set_c)
    report["set_model"] = {"intercept": set_model[0], "weights": set_model[1], "data": [str(p) for p in args.set_data],
                           **set_report(srows, set_model, args.set_c, args.set_k_max, args.set_floor)}
    command = "bench/fit_prompt_bar.py " + " ".join(sys.argv[1:])
    report["command"] = command
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text)
    if args.write:
        shown = report.get("holdout_scores") or report["train"]
        bins = "\n".join(f"    {b['bin']}: n={b['n']:5d}  predicted={b['predicted']}  observed={b['observed']}"
                         for b in shown["reliability"])
        doc = (f"The prompt bar's coefficients (sessions.prompt_bar), fitted offline: do not edit by hand.\n\n"
               f"Fitted by: .venv/bin/python {command}\n"
               f"Data: " + "; ".join(f"{p} ({v['n']} candidates, {v['positives']} needed)"
                                      for p, v in report["train_by_source"].items()) + "\n"
               f"Logistic regression (L2, C={args.c}{', each source weighted as the largest' if args.balance else ''}); on the {'holdout' if args.holdout else 'training data'}: "
               f"Brier {shown['brier']}, log loss {shown['log_loss']}, ECE {shown['ece']}. Reliability:\n{bins}\n")
        sm = report["set_model"]
        cv = sm["cross_validated_by_family"]
        set_bins = "\n".join(f"    {b['bin']}: n={b['n']:5d}  predicted={b['predicted']}  observed={b['observed']}"
                             for b in cv["reliability"])
        doc += (f"\nSet model (precise first prompts: P(the top k holds a needed memory) over {', '.join(SET_FEATURES)}),"
                f" fitted on {sm['pools']} pools x k = 1..{SET_K} ({sm['families']} families) of {', '.join(sm['data'])};"
                f" share held at k: {sm['held_at_k']}. Cross-validated by family: Brier {cv['brier']}, ECE {cv['ece']};"
                f" the rule at {SET_BAR} (k <= {args.set_k_max}) holds a needed memory in {cv['rule']['held']} of the"
                f" pools, mean k {cv['rule']['mean_k']}; with its members below {cv['rule']['floor']} held out"
                f" (SET_MEMBER_FLOOR) {cv['rule']['held_above_floor']}, mean shown {cv['rule']['mean_shown_above_floor']}."
                f" Reliability (cross-validated):\n{set_bins}\n")
        args.write.write_text(render(intercept, weights, doc, set_model))


if __name__ == "__main__":
    main()
