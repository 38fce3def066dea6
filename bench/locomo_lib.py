"""LoCoMo protocol A building blocks (stdlib only): loader, gold normalisation, metrics,
paired sign test and a reference BM25.

Kept free of kenning imports so the numbers it defines can be checked on their own and
reused by other benchmarks (protocol B, embedding comparisons). See
../shared/bench/PROTOCOL.md for the protocol; nothing here copies the (CC BY-NC) data.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Sequence

DATE_FORMAT = "%I:%M %p on %d %B, %Y"
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SCORED_CATEGORIES = (1, 2, 3, 4)
KS = (5, 10)

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DIA_ID = re.compile(r"^D:?0*(\d+):0*(\d+)$")
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: int
    index: int
    speaker: str
    content: str
    created_at: str  # ISO 8601 UTC, "Z"


@dataclass(frozen=True)
class Question:
    qid: str  # "<conv>#<index in qa>"
    question: str
    category: int
    gold: tuple[str, ...]
    raw_evidence: tuple[str, ...]


@dataclass
class Conversation:
    name: str
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]  # every qa item, including category 5 and gold-less ones

    def scored_questions(self) -> list[Question]:
        return [q for q in self.questions if q.category in SCORED_CATEGORIES and q.gold]

    def missing_gold(self) -> list[tuple[str, str]]:
        """(qid, dia_id) pairs whose gold id names no turn of this conversation."""
        known = {t.dia_id for t in self.turns}
        return [(q.qid, g) for q in self.scored_questions() for g in q.gold if g not in known]


def parse_session_date(value: str) -> str:
    dt = datetime.strptime(value.strip(), DATE_FORMAT).replace(tzinfo=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def normalise_evidence(evidence: Iterable[object]) -> tuple[str, ...]:
    """PROTOCOL.md gold normalisation: split on ';', ',' and whitespace, read each piece as
    D<s>:<i> (stray colon and leading zeros dropped), drop what does not parse; order kept,
    duplicates removed."""
    out: list[str] = []
    for item in evidence or ():
        for piece in _EVIDENCE_SPLIT.split(str(item).strip()):
            m = _DIA_ID.match(piece)
            if not m:
                continue
            dia = f"D{int(m.group(1))}:{int(m.group(2))}"
            if dia not in out:
                out.append(dia)
    return tuple(out)


def turn_content(turn: dict) -> str:
    text = f"{turn['speaker']}: {turn.get('text', '')}".rstrip()
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shares a photo: {caption}]"
    return text


def load_conversation(path: Path) -> Conversation:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    conv = data.get("conversation", data)  # the upstream release nests it; the copy here does not
    qa = data.get("qa", conv.get("qa", []))
    name = Path(path).stem
    sessions = sorted(
        (int(m.group(1)), key) for key in conv if (m := _SESSION_KEY.match(key)) is not None
    )
    turns: list[Turn] = []
    for num, key in sessions:
        created = parse_session_date(conv[f"session_{num}_date_time"])
        for i, t in enumerate(conv[key] or []):
            turns.append(
                Turn(
                    dia_id=str(t["dia_id"]).strip(),
                    session=num,
                    index=i,
                    speaker=t["speaker"],
                    content=turn_content(t),
                    created_at=created,
                )
            )
    questions = [
        Question(
            qid=f"{name}#{i}",
            question=str(q["question"]),
            category=int(q["category"]),
            gold=normalise_evidence(q.get("evidence") or ()),
            raw_evidence=tuple(str(e) for e in (q.get("evidence") or ())),
        )
        for i, q in enumerate(qa)
    ]
    return Conversation(name, (conv["speaker_a"], conv["speaker_b"]), turns, questions)


def load_all(data_dir: Path, limit: int | None = None) -> list[Conversation]:
    paths = sorted(Path(data_dir).glob("conv-*.json"), key=lambda p: (len(p.stem), p.stem))
    if not paths:
        raise FileNotFoundError(f"no conv-*.json under {data_dir}")
    return [load_conversation(p) for p in paths[:limit]]


# ----------------------------------------------------------------------------- metrics


def dedup_ranked(ranked: Iterable[Iterable[str] | str]) -> list[frozenset[str]]:
    """Ranked results as a list of dia_id sets (a memory may stand for several turns when
    identical turns were deduplicated, or for a derived memory); empty entries dropped."""
    out: list[frozenset[str]] = []
    for item in ranked:
        ids = frozenset([item]) if isinstance(item, str) else frozenset(item)
        if ids:
            out.append(ids)
    return out


def _hits(ranked: Sequence[frozenset[str]], gold: Sequence[str], k: int) -> set[str]:
    gold_set = set(gold)
    found: set[str] = set()
    for ids in ranked[:k]:
        found |= ids & gold_set
    return found


def recall_at_k(ranked: Sequence[frozenset[str]], gold: Sequence[str], k: int) -> float:
    if not gold:
        return 0.0
    return len(_hits(ranked, gold, k)) / len(set(gold))


def recall_all_at_k(ranked: Sequence[frozenset[str]], gold: Sequence[str], k: int) -> float:
    return 1.0 if gold and len(_hits(ranked, gold, k)) == len(set(gold)) else 0.0


def ndcg_at_k(ranked: Sequence[frozenset[str]], gold: Sequence[str], k: int) -> float:
    """Binary gains; a result gains 1 if it holds a gold turn not already credited higher up;
    ideal DCG over min(|gold|, k)."""
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    credited: set[str] = set()
    dcg = 0.0
    for rank, ids in enumerate(ranked[:k], start=1):
        new = (ids & gold_set) - credited
        if new:
            credited |= new
            dcg += 1.0 / math.log2(rank + 1)
    ideal = sum(1.0 / math.log2(r + 1) for r in range(1, min(len(gold_set), k) + 1))
    return dcg / ideal


def question_metrics(ranked: Sequence[frozenset[str]], gold: Sequence[str]) -> dict[str, float]:
    return {
        "recall@5": recall_at_k(ranked, gold, 5),
        "recall@10": recall_at_k(ranked, gold, 10),
        "ndcg@10": ndcg_at_k(ranked, gold, 10),
        "recall_all@10": recall_all_at_k(ranked, gold, 10),
    }


METRIC_NAMES = ("recall@5", "recall@10", "ndcg@10", "recall_all@10")


def aggregate(rows: Sequence[tuple[int, dict[str, float]]]) -> dict:
    """rows: (category, per-question metrics). Micro-average overall and per category."""

    def mean(items: list[dict[str, float]]) -> dict[str, float]:
        n = len(items)
        out: dict[str, float] = {m: (sum(i[m] for i in items) / n if n else 0.0) for m in METRIC_NAMES}
        out["n"] = n
        return out

    by_cat: dict[int, list[dict[str, float]]] = defaultdict(list)
    for cat, m in rows:
        by_cat[cat].append(m)
    return {
        "overall": mean([m for _, m in rows]),
        "by_category": {
            f"{c} {CATEGORY_NAMES.get(c, '?')}": mean(by_cat[c]) for c in sorted(by_cat)
        },
    }


def sign_test(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """Exact two-sided paired sign test of a vs b (ties dropped)."""
    if len(a) != len(b):
        raise ValueError("paired samples differ in length")
    wins = sum(1 for x, y in zip(a, b) if x > y + 1e-12)
    losses = sum(1 for x, y in zip(a, b) if y > x + 1e-12)
    ties = len(a) - wins - losses
    n = wins + losses
    if n == 0:
        p = 1.0
    else:
        k = min(wins, losses)
        tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
        p = min(1.0, 2.0 * tail)
    return {"wins": wins, "losses": losses, "ties": ties, "p_value": p}


# ----------------------------------------------------------------------------- reference BM25

_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


@dataclass
class ReferenceBM25:
    """Plain Okapi BM25 (PROTOCOL.md reference): tokens [a-z0-9]+, no stemming, no stop
    words, k1=1.2, b=0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5))."""

    docs: list[str]
    k1: float = 1.2
    b: float = 0.75
    _tf: list[Counter] = field(init=False, repr=False)
    _len: list[int] = field(init=False, repr=False)
    _idf: dict[str, float] = field(init=False, repr=False)
    _postings: dict[str, list[int]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._tf = [Counter(tokenize(d)) for d in self.docs]
        self._len = [sum(tf.values()) for tf in self._tf]
        n = len(self.docs)
        self._avg = (sum(self._len) / n) if n else 0.0
        df: Counter = Counter()
        self._postings = defaultdict(list)
        for i, tf in enumerate(self._tf):
            for term in tf:
                df[term] += 1
                self._postings[term].append(i)
        self._idf = {t: math.log(1.0 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}

    def scores(self, query: str) -> dict[int, float]:
        out: dict[int, float] = defaultdict(float)
        for term in tokenize(query):  # repeated query terms count again, as in rank_bm25
            idf = self._idf.get(term)
            if idf is None:
                continue
            for i in self._postings[term]:
                tf = self._tf[i][term]
                norm = self.k1 * (1.0 - self.b + self.b * self._len[i] / self._avg)
                out[i] += idf * tf * (self.k1 + 1.0) / (tf + norm)
        return out

    def search(self, query: str, k: int) -> list[int]:
        s = self.scores(query)
        return sorted(s, key=lambda i: (-s[i], i))[:k]
