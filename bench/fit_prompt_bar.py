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
from kenning.sessions.prompt_bar import FEATURES, with_interactions  # noqa: E402


def read_text(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def load(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    rows = [json.loads(line) for p in paths for line in read_text(p).splitlines() if line.strip()]
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


def render(intercept: float, weights: dict[str, float], doc: str) -> str:
    lines = ['"""' + doc.rstrip() + '\n"""', "", f"INTERCEPT: float = {intercept!r}",
             "WEIGHTS: dict[str, float] = {"]
    lines += [f"    {name!r}: {w!r}," for name, w in weights.items()]
    lines += ["}", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, nargs="+", required=True)
    ap.add_argument("--holdout", type=Path, nargs="*", default=[])
    ap.add_argument("--c", type=float, default=1.0)
    ap.add_argument("--balance", action="store_true", help="weight each --data file as much as the largest")
    ap.add_argument("--write", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    parts = [load([p]) for p in args.data]
    x, y = np.vstack([px for px, _ in parts]), np.concatenate([py for _, py in parts])
    # each development source counts as much as the largest (--balance): the dev split's 30 coding tasks would
    # otherwise weigh nothing beside the simulation's thousands of candidates
    largest = max(len(py) for _, py in parts)
    weights_of = np.concatenate([np.full(len(py), largest / len(py) if args.balance else 1.0) for _, py in parts])
    model = LogisticRegression(C=args.c, max_iter=5000)
    model.fit(x, y, sample_weight=weights_of)
    weights = {f: round(float(w), 5) for f, w in zip(FEATURES, model.coef_[0])}
    intercept = round(float(model.intercept_[0]), 5)

    def predict(xs: np.ndarray) -> np.ndarray:
        z = intercept + xs @ np.array([weights[f] for f in FEATURES])
        return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))

    report = {"features": list(FEATURES), "intercept": intercept, "weights": weights, "c": args.c,
              "data": [str(p) for p in args.data], "holdout": [str(p) for p in args.holdout],
              "train": scores(predict(x), y),
              "train_by_source": {str(p): scores(predict(px), py) for p, (px, py) in zip(args.data, parts)}}
    if args.holdout:
        hx, hy = load(args.holdout)
        report["holdout_scores"] = scores(predict(hx), hy)
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
        args.write.write_text(render(intercept, weights, doc))


if __name__ == "__main__":
    main()
