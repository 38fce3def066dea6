"""Extraction precision (issue 22): does the claim test keep policy sentences and drop chatter?

    .venv/bin/python bench/extraction_precision.py --out /tmp/extraction_precision.json

Data: ../shared/bench/sde (the development split, read in place) and the labels in
bench/data/claims_labelled.json, which hold no dataset text: per decision chat (a
conversation task's chat; an amended task's chats A and B) one row per sentence —
[turn, sentence in turn, label, sha1[:8] of the sentence] — over the sentences that
`offline_rules.split_sentences` gives for each turn, labelled by reading them one by one. Labels
(the rule applied):
  P  policy: states (part of) the task's `policy` as a rule — said by the user, an answer to
     the assistant's question that the question completes ("Down." to "round half-cents up or
     down?"), or an assistant statement the user accepted / a recap the user did not contradict
  C  another durable claim of the project (a rule, gotcha or decision that is not the policy)
  s  the stale rule of an amended task's first chat (a claim when said; amended later)
  t  the task: the bug report / request that opens the chat
  q  question          h  hedge, guess, speculation      a  acknowledgement, thanks, filler
  f  fragment: its subject is in another sentence or turn, and no question supplies it
  p  plan, process narration, apology (first person: "I'll …", "Let me …")
  n  observation, narration, calculation, rationale that is not itself a rule
  x  an assistant proposal the user did not accept (or contradicted)
Negatives added without reading: every sentence of the 140 decoy chats (the README: they hold
no project decisions) and every task's `bug_report` (as the opening prompt of a session, and
again as a user statement later in a session).

Measured: kept sentences (the claim test says constraint / decision / preference / gotcha),
precision = kept labelled P, C or s / kept; recall = kept P / all P (and both again for what is kept
at or above the confidence gate, i.e. not written needs_review); per memory type; per
source (decision chats, decoys, bug reports); and cross-validated across task families
(leave-one-family-out: each fold is one family's decision chats + a 1/k share of the decoys +
that family's bug reports). The claim test has no fitted parameters, so the folds show its
spread across families, not a train/test gap. Targets: precision >= 0.9 at recall >= 0.9.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))
from kenning.core import claims  # noqa: E402
from kenning.providers.offline_rules import split_sentences  # noqa: E402

POSITIVE = {"P", "C", "s"}  # a kept sentence with one of these labels is a right claim
LABELS = ROOT / "data" / "claims_labelled.json"


def default_data() -> Path:
    for parent in ROOT.parents:
        if (parent.parent / "shared" / "bench" / "sde" / "tasks.json").exists():
            return parent.parent / "shared" / "bench" / "sde"
    return Path("../shared/bench/sde")


def family(task_id: str) -> str:
    return re.sub(r"(-history|-amended)?-\d+$", "", task_id)


def _sha(sentence: str) -> str:
    return hashlib.sha1(" ".join(sentence.split()).encode()).hexdigest()[:8]


def judged(turns: list[dict]) -> list[tuple[int, str, claims.Verdict]]:
    return claims.judge_turns([(t["role"], t["text"]) for t in turns], split_sentences)


def decision_chats(tasks: list[dict]) -> dict[str, list[dict]]:
    out = {}
    for task in tasks:
        if task["source"] == "conversation":
            out[task["task_id"]] = task["conversations"]
        elif task["source"] == "conversation-amended":
            for part, chat in zip("AB", task["conversations"]):
                out[f"{task['task_id']}:{part}"] = chat
    return out


def examples(data: Path, labels: dict) -> list[dict]:
    """Every judged sentence with its label, source and family."""
    tasks = json.loads((data / "tasks.json").read_text())
    decoys = json.loads((data / "decoy_conversations.json").read_text())
    rows: list[dict] = []
    for chat_id, turns in decision_chats(tasks).items():
        marks = labels["chats"][chat_id]
        verdicts = judged(turns)
        if len(verdicts) != len(marks):
            raise SystemExit(f"{chat_id}: {len(verdicts)} sentences, {len(marks)} labels (splitter changed?)")
        for (turn, sentence, verdict), (l_turn, _, label, sha) in zip(verdicts, marks):
            if turn != l_turn or _sha(sentence) != sha:
                raise SystemExit(f"{chat_id}: sentence {sentence[:60]!r} does not match its label row")
            rows.append({"source": "decision_chat", "unit": chat_id, "family": family(chat_id.split(":")[0]),
                         "label": label, "sentence": sentence, "verdict": verdict})
    for i, decoy in enumerate(decoys):
        for _, sentence, verdict in judged(decoy["turns"]):
            rows.append({"source": "decoy", "unit": f"decoy-{i:03d}", "family": None, "label": "decoy",
                         "sentence": sentence, "verdict": verdict})
    seen = set()
    for task in tasks:
        if task["bug_report"] in seen:
            continue
        seen.add(task["bug_report"])
        opening = judged([{"role": "user", "text": task["bug_report"]}])
        later = judged([{"role": "user", "text": "Earlier request."}, {"role": "assistant", "text": "Done."},
                        {"role": "user", "text": task["bug_report"]}])[2:]
        for name, got in (("bug_report_opening", opening), ("bug_report_later", later)):
            for _, sentence, verdict in got:
                rows.append({"source": name, "unit": task["task_id"], "family": family(task["task_id"]),
                             "label": "t", "sentence": sentence, "verdict": verdict})
    return rows


def score(rows: list[dict]) -> dict:
    kept = [r for r in rows if r["verdict"].kept]
    right = [r for r in kept if r["label"] in POSITIVE]
    policy = [r for r in rows if r["label"] == "P"]
    found = [r for r in policy if r["verdict"].kept]
    out = {"sentences": len(rows), "kept": len(kept), "right": len(right),
           "precision": round(len(right) / len(kept), 3) if kept else None,
           "policy_sentences": len(policy), "policy_kept": len(found),
           "recall": round(len(found) / len(policy), 3) if policy else None}
    shown = [r for r in kept if not r["verdict"].needs_review]  # kept at or above the gate: shown unasked
    out["kept_not_in_review"] = len(shown)
    out["precision_not_in_review"] = round(sum(r["label"] in POSITIVE for r in shown) / len(shown), 3) if shown else None
    out["recall_not_in_review"] = round(sum(r["label"] == "P" for r in shown) / len(policy), 3) if policy else None
    by_type = {}
    for kind in sorted({r["verdict"].type for r in kept}):
        of_type = [r for r in kept if r["verdict"].type == kind]
        by_type[kind] = {"kept": len(of_type), "precision": round(sum(r["label"] in POSITIVE for r in of_type) / len(of_type), 3),
                         "policy_kept": sum(r["label"] == "P" for r in of_type)}
    out["by_type"] = by_type
    return out


def folds(rows: list[dict]) -> dict:
    families = sorted({r["family"] for r in rows if r["source"] == "decision_chat"})
    decoy_units = sorted({r["unit"] for r in rows if r["source"] == "decoy"})
    share = {unit: i % len(families) for i, unit in enumerate(decoy_units)}
    per = {}
    for k, fam in enumerate(families):
        fold = [r for r in rows if (r["source"] == "decision_chat" and r["family"] == fam)
                or (r["source"] == "decoy" and share[r["unit"]] == k)
                or (r["source"].startswith("bug_report") and r["family"] == fam)]
        per[fam] = score(fold)
    precisions = [s["precision"] for s in per.values() if s["precision"] is not None]
    recalls = [s["recall"] for s in per.values() if s["recall"] is not None]
    return {"k": len(families), "precision_mean": round(statistics.fmean(precisions), 3),
            "precision_min": min(precisions), "recall_mean": round(statistics.fmean(recalls), 3),
            "recall_min": min(recalls), "per_family": {f: {k: v for k, v in s.items() if k != "by_type"}
                                                       for f, s in per.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="default: ../shared/bench/sde")
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--show", type=int, default=0, help="print up to N kept sentences that are wrong, and N missed")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    data = args.data or default_data()
    labels = json.loads(args.labels.read_text())
    rows = examples(data, labels)
    result = {"bench": "extraction_precision", "ruleset": claims.RULESET, "data": str(data),
              "labels": str(args.labels), "overall": score(rows),
              "by_source": {s: score([r for r in rows if r["source"] == s])
                            for s in ("decision_chat", "decoy", "bug_report_opening", "bug_report_later")},
              "by_label": {}, "cross_validated": folds(rows)}
    for label in sorted({r["label"] for r in rows}):
        of = [r for r in rows if r["label"] == label]
        result["by_label"][label] = {"sentences": len(of), "kept": sum(r["verdict"].kept for r in of)}
    rules: dict[str, dict[str, int]] = {}
    for r in rows:
        if r["verdict"].kept:
            row = rules.setdefault(r["verdict"].reason, {"kept": 0, "right": 0})
            row["kept"] += 1
            row["right"] += r["label"] in POSITIVE
    result["by_rule"] = rules
    overall = result["overall"]
    result["targets"] = {"precision>=0.9": (overall["precision"] or 0) >= 0.9, "recall>=0.9": (overall["recall"] or 0) >= 0.9}
    if args.show:
        wrong = [r for r in rows if r["verdict"].kept and r["label"] not in POSITIVE]
        missed = [r for r in rows if r["label"] == "P" and not r["verdict"].kept]
        result["wrong_kept"] = [{"unit": r["unit"], "label": r["label"], "rule": r["verdict"].reason,
                                 "text": r["verdict"].text[:200]} for r in wrong[:args.show]]
        result["missed_policy"] = [{"unit": r["unit"], "why": r["verdict"].reason, "text": r["sentence"][:200]}
                                   for r in missed[:args.show]]
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
