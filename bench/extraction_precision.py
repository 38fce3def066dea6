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

Issue 31 adds three labelled shapes (bench/data/claims_labelled.json, each row with the rule applied):
  whole         the P / C / s rows of the decision chats, read alone: whole as said ('W'), or its subject is
                missing (a fragment: "Percent first, always.") and the stored text must name one of the
                listed terms (the chat's function, the question it answers) — or it must not be kept;
  commits       every 16th commit subject of boltons_commits.json: never kept as a rule (judged as git ingest
                and the store migration judge text whose speaker is not told);
  scope_decoys  decoy-chat sentences labelled project / area; with every P / C / s claim of the decision
                chats (all about their task's function: area), scored by claims.scope_of on what is stored.
precision_whole counts a kept sentence right only when it is a claim (P, C, s) and its stored text is whole.
Issue 31, stop s34, adds `leaning` (bench/data/claims_labelled.json): claims whose subject may be another sentence,
  'leans' ("The only thing this amendment changes is the scope: …"; "Only the leading-zero digit strings." answering
  a question about "that formula form" in a chat that names no code) may be kept only in review, never shown unasked;
  'whole' (a "that" inside its own sentence, a question the chat's code completes) must not be held for it.
Issue 31, second stop, adds one more:
  not_durable   claims of the decision chats that hold only for the change at hand or for now (a test flaky
                this week, this change's rollout, a worked example, a verdict on a proposal, what was done
                before): none may be kept as a rule. precision_durable counts a kept sentence right only when
                it is a claim, whole, and not one of these.

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
sys.path.append(str(ROOT.parent / "src"))  # PYTHONPATH first: "before" runs point it at an old tree
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


def scope(verdict: claims.Verdict | None, sentence: str) -> str | None:
    """Where the claim applies, as claims.scope_of tells it from what is stored (None: not told, or code
    without a scope classifier)."""
    scope_of = getattr(claims, "scope_of", None)
    if scope_of is None:
        return None
    text = verdict.text if verdict is not None and verdict.kept else sentence
    question = verdict.evidence.antecedent if verdict is not None and verdict.evidence else None
    try:  # as the store reads it: its "(answering: …)" / "(after: …)" is context, not its own words
        from kenning.core.rule_scope import stored_scope
    except ImportError:
        return scope_of(text, question=question).applies
    return stored_scope(text, question).applies


def is_whole(row: dict) -> bool:
    """A kept claim names its subject: whole as said, or its stored text names one of the labelled terms."""
    terms = row.get("whole_terms")
    return terms is None or any(t.lower() in row["verdict"].text.lower() for t in terms)


def examples(data: Path, labels: dict) -> list[dict]:
    """Every judged sentence with its label, source and family."""
    tasks = json.loads((data / "tasks.json").read_text())
    decoys = json.loads((data / "decoy_conversations.json").read_text())
    whole = labels.get("whole", {}).get("rows", {})
    short_lived = {(c, k): (kind, sha) for c, k, kind, sha, _rule in labels.get("not_durable", {}).get("rows", [])}
    leaning = {(c, k): (kind, sha) for c, k, kind, sha, _rule in labels.get("leaning", {}).get("rows", [])}
    rows: list[dict] = []
    for chat_id, turns in decision_chats(tasks).items():
        marks = labels["chats"][chat_id]
        verdicts = judged(turns)
        if len(verdicts) != len(marks):
            raise SystemExit(f"{chat_id}: {len(verdicts)} sentences, {len(marks)} labels (splitter changed?)")
        for k, ((turn, sentence, verdict), (l_turn, _, label, sha)) in enumerate(zip(verdicts, marks)):
            if turn != l_turn or _sha(sentence) != sha:
                raise SystemExit(f"{chat_id}: sentence {sentence[:60]!r} does not match its label row")
            mark = whole.get(chat_id, {}).get(str(k), "W")
            kind, nd_sha = short_lived.get((chat_id, k), (None, None))
            if kind and nd_sha != sha:
                raise SystemExit(f"{chat_id}: sentence {k} does not match its not_durable row")
            leans, lean_sha = leaning.get((chat_id, k), (None, None))
            if leans and lean_sha != sha:
                raise SystemExit(f"{chat_id}: sentence {k} does not match its leaning row")
            rows.append({"source": "decision_chat", "unit": chat_id, "family": family(chat_id.split(":")[0]),
                         "label": label, "sentence": sentence, "verdict": verdict,
                         "whole_terms": None if mark == "W" else mark["terms"], "not_durable": kind, "leaning": leans,
                         "scope_label": "area" if label in POSITIVE else None,
                         "scope": scope(verdict, sentence) if label in POSITIVE and verdict.kept else None})
    by_sha = {c["sha"]: c for c in json.loads((data / "boltons_commits.json").read_text())}
    for sha, label, _rule in labels.get("commits", {}).get("rows", []):
        subject = by_sha[sha]["subject"]
        rows.append({"source": "commit_subject", "unit": sha, "family": None, "label": label, "sentence": subject,
                     "verdict": claims.judge(subject, claims.Context(speaker="unknown"))})
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


def scope_rows(data: Path, labels: dict) -> list[dict]:
    """The decoy sentences labelled project / area (scope only: not part of the claim counts)."""
    decoys = json.loads((data / "decoy_conversations.json").read_text())
    out = []
    for i, turn, k, applies, sha, _rule in labels.get("scope_decoys", {}).get("rows", []):
        sentence = split_sentences(decoys[i]["turns"][turn]["text"])[k]
        if _sha(sentence) != sha:
            raise SystemExit(f"decoy {i} turn {turn}: sentence {k} does not match its scope label")
        out.append({"source": "scope_decoy", "unit": f"decoy-{i:03d}", "scope_label": applies,
                    "scope": scope(None, sentence), "sentence": sentence})
    return out


def scope_score(rows: list[dict]) -> dict:
    """Scope accuracy over the kept claims labelled with a scope and the decoy scope rows."""
    rated = [r for r in rows if r.get("scope_label") and (r["source"] == "scope_decoy" or r["verdict"].kept)]
    out: dict = {"rated": len(rated), "accuracy": round(sum(r["scope"] == r["scope_label"] for r in rated) / len(rated), 3)
                 if rated else None}
    for applies in ("project", "area"):
        of = [r for r in rated if r["scope_label"] == applies]
        out[applies] = {"rated": len(of), "right": sum(r["scope"] == applies for r in of),
                        "told_none": sum(r["scope"] is None for r in of)}
    return out


def score(rows: list[dict]) -> dict:
    kept = [r for r in rows if r["verdict"].kept]
    right = [r for r in kept if r["label"] in POSITIVE]
    whole = [r for r in right if is_whole(r)]
    policy = [r for r in rows if r["label"] == "P"]
    found = [r for r in policy if r["verdict"].kept]
    durable = [r for r in whole if not r.get("not_durable")]
    out = {"sentences": len(rows), "kept": len(kept), "right": len(right),
           "precision": round(len(right) / len(kept), 3) if kept else None,
           "right_and_whole": len(whole), "precision_whole": round(len(whole) / len(kept), 3) if kept else None,
           "precision_durable": round(len(durable) / len(kept), 3) if kept else None,
           "policy_sentences": len(policy), "policy_kept": len(found),
           "recall": round(len(found) / len(policy), 3) if policy else None}
    shown = [r for r in kept if not r["verdict"].needs_review]  # kept at or above the gate: shown unasked
    out["kept_not_in_review"] = len(shown)
    out["precision_not_in_review"] = round(sum(r["label"] in POSITIVE for r in shown) / len(shown), 3) if shown else None
    out["precision_whole_not_in_review"] = round(sum(r["label"] in POSITIVE and is_whole(r) for r in shown) / len(shown), 3) \
        if shown else None
    out["recall_not_in_review"] = round(sum(r["label"] == "P" for r in shown) / len(policy), 3) if policy else None
    by_type = {}
    for kind in sorted({r["verdict"].type for r in kept}):
        of_type = [r for r in kept if r["verdict"].type == kind]
        by_type[kind] = {"kept": len(of_type), "precision": round(sum(r["label"] in POSITIVE for r in of_type) / len(of_type), 3),
                         "policy_kept": sum(r["label"] == "P" for r in of_type)}
    out["by_type"] = by_type
    return out


SHARED = ("decoy", "commit_subject", "scope_decoy")  # sources with no family: a 1/k share in each fold


def folds(rows: list[dict]) -> dict:
    families = sorted({r["family"] for r in rows if r["source"] == "decision_chat"})
    shared_units = sorted({(r["source"], r["unit"]) for r in rows if r["source"] in SHARED})
    share = {unit: i % len(families) for i, unit in enumerate(shared_units)}
    per = {}
    for k, fam in enumerate(families):
        fold = [r for r in rows if (r["source"] == "decision_chat" and r["family"] == fam)
                or (r["source"] in SHARED and share[(r["source"], r["unit"])] == k)
                or (r["source"].startswith("bug_report") and r["family"] == fam)]
        per[fam] = {**score([r for r in fold if r["source"] != "scope_decoy"]), "scope": scope_score(fold)}
    out: dict = {"k": len(families)}
    for key, values in (("precision", [s["precision"] for s in per.values()]),
                        ("precision_whole", [s["precision_whole"] for s in per.values()]),
                        ("precision_durable", [s["precision_durable"] for s in per.values()]),
                        ("recall", [s["recall"] for s in per.values()]),
                        ("scope_accuracy", [s["scope"]["accuracy"] for s in per.values()])):
        known = [v for v in values if v is not None]
        out[f"{key}_mean"], out[f"{key}_min"] = round(statistics.fmean(known), 3), min(known)
    out["per_family"] = {f: {"kept": s["kept"], "precision": s["precision"], "precision_whole": s["precision_whole"],
                             "precision_durable": s["precision_durable"],
                             "recall": s["recall"], "scope_accuracy": s["scope"]["accuracy"], "scope_rated": s["scope"]["rated"]}
                         for f, s in per.items()}
    return out


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
    scoped = scope_rows(data, labels)
    result = {"bench": "extraction_precision", "ruleset": claims.RULESET, "data": str(data),
              "labels": str(args.labels), "overall": score(rows),
              "by_source": {s: score([r for r in rows if r["source"] == s])
                            for s in ("decision_chat", "decoy", "bug_report_opening", "bug_report_later", "commit_subject")},
              "scope": scope_score(rows + scoped), "by_label": {}, "cross_validated": folds(rows + scoped)}
    every_commit = json.loads((data / "boltons_commits.json").read_text())  # all of them are commits: none is a rule
    kept_commits = [c["subject"] for c in every_commit
                    if claims.judge(c["subject"], claims.Context(speaker="unknown")).kept]
    result["commit_subjects_all"] = {"commits": len(every_commit), "kept_as_rule": len(kept_commits),
                                     "examples": kept_commits[:args.show]}
    fragments = [r for r in rows if r.get("whole_terms") is not None]
    result["fragments"] = {"labelled": len(fragments), "kept": sum(r["verdict"].kept for r in fragments),
                           "kept_whole": sum(r["verdict"].kept and is_whole(r) for r in fragments),
                           "kept_not_whole": sum(r["verdict"].kept and not is_whole(r) for r in fragments)}
    short_lived = [r for r in rows if r.get("not_durable")]
    result["not_durable"] = {"labelled": len(short_lived), "kept": sum(r["verdict"].kept for r in short_lived),
                             "by_kind": {k: sum(r["not_durable"] == k and r["verdict"].kept for r in short_lived)
                                         for k in sorted({r["not_durable"] for r in short_lived})},
                             "kept_texts": [r["verdict"].text[:160] for r in short_lived if r["verdict"].kept][:args.show]}
    lean = [r for r in rows if r.get("leaning")]  # issue 31, stop s34: a claim whose subject is another sentence
    result["leaning"] = {
        "labelled": len(lean),
        "leans": sum(r["leaning"] == "leans" for r in lean),
        "leans_shown_unasked": sum(r["leaning"] == "leans" and r["verdict"].kept and not r["verdict"].needs_review
                                   for r in lean),
        "whole": sum(r["leaning"] == "whole" for r in lean),
        "whole_held_for_leaning": sum(r["leaning"] == "whole" and r["verdict"].kept and any(
            c.startswith("leans-on:") for c in (r["verdict"].evidence.cues if r["verdict"].evidence else [])) for r in lean)}
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
    result["targets"] = {"precision>=0.9": (overall["precision"] or 0) >= 0.9, "recall>=0.9": (overall["recall"] or 0) >= 0.9,
                         "precision_whole>=0.9": (overall["precision_whole"] or 0) >= 0.9,
                         "precision_durable>=0.9": (overall.get("precision_durable") or 0) >= 0.9,
                         "scope_accuracy>=0.9": (result["scope"]["accuracy"] or 0) >= 0.9,
                         "leaning_never_shown_unasked": result["leaning"]["leans_shown_unasked"] == 0
                         and result["leaning"]["whole_held_for_leaning"] == 0}
    if args.show:
        wrong = [r for r in rows if r["verdict"].kept and r["label"] not in POSITIVE]
        missed = [r for r in rows if r["label"] == "P" and not r["verdict"].kept]
        result["wrong_kept"] = [{"unit": r["unit"], "label": r["label"], "rule": r["verdict"].reason,
                                 "text": r["verdict"].text[:200]} for r in wrong[:args.show]]
        result["kept_not_whole"] = [{"unit": r["unit"], "terms": r["whole_terms"], "text": r["verdict"].text[:200]}
                                    for r in rows if r["verdict"].kept and r["label"] in POSITIVE and not is_whole(r)][:args.show]
        result["scope_wrong"] = [{"unit": r["unit"], "label": r["scope_label"], "scope": r["scope"],
                                  "text": (r["verdict"].text if "verdict" in r else r["sentence"])[:160]}
                                 for r in rows + scoped if r.get("scope_label") and r.get("scope") != r["scope_label"]
                                 and (r["source"] == "scope_decoy" or r["verdict"].kept)][:args.show]
        result["missed_policy"] = [{"unit": r["unit"], "why": r["verdict"].reason, "text": r["sentence"][:200]}
                                   for r in missed[:args.show]]
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
