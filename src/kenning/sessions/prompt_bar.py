"""The prompt bar (issue 32): inject at a prompt only what this session probably needs.

Every candidate a prompt's recall offers gets a **calibrated probability of being needed**: a logistic
model over what is known about it here — the legs' scores and their agreement (BM25 relative to the
prompt's best match, cosine and its gap to the closest hit, recall rank), what it is (a raw exchange, a
stated rule), the agent's ratings of it in earlier sessions, what this session already used (closeness
to memories rated useful in it), and the task in progress (`ranking.continuing`). The coefficients are
fitted offline on development data by bench/fit_prompt_bar.py (the fit's data, command and reliability
bins are in `prompt_bar_model`); below `sessions.ranking.prompt_min_probability` nothing is shown.

Three rules come before the probability, because no score makes them right:
- a rule whose code is gone (`memories.stale_at`, issue 31) waits for review, never shown unasked;
- a near-copy (cosine ≥ `prompt_near_copy`) of a memory already shown in this session, or chosen for this
  prompt, is not shown again;
- a raw exchange competes only where nothing distilled covers it (a distilled memory of the pool, or one
  already shown, at cosine ≥ `raw_cover_similarity`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from kenning.core.config_sessions import RankingSettings
from kenning.core.text import STOP_WORDS
from kenning.core.types import Memory
from kenning.sessions.context import Hit
from kenning.sessions.prompt_bar_model import INTERCEPT, WEIGHTS
from kenning.store import ranking as ranking_store
from kenning.store.backend import Connection

RULE_TYPES = frozenset({"decision", "constraint", "preference", "gotcha", "requirement"})
_WORD = re.compile(r"[A-Za-z0-9_./-]{3,}")
_CODE = re.compile(r"[_./]|[a-z][A-Z]|[a-z0-9]-[a-z]")  # a path, a module, snake_case, camelCase, kebab-case


def _terms(text: str) -> set[str]:
    return {w.lower().strip("./-") for w in _WORD.findall(text or "")} - STOP_WORDS - {""}


def text_features(prompt: str, content: str) -> dict[str, float]:
    """What the prompt's own words say about a memory: the share of the prompt's terms it contains
    (`coverage`) and whether it names a code identifier the prompt names (`ident_match`: a path, a
    module, a snake_case, camelCase or kebab-case name) — a precise prompt's strongest cue."""
    asked = _terms(prompt)
    have = _terms(content)
    idents = {w.lower().strip("./-") for w in _WORD.findall(prompt or "") if _CODE.search(w)}
    return {"coverage": len(asked & have) / len(asked) if asked else 0.0,
            "ident_match": 1.0 if idents & have else 0.0}

FEATURES = ("bm25_rel", "has_bm25", "cosine", "cosine_gap", "both_legs", "rank_recip", "raw", "commit", "rule_type",
            "useful_before", "low_before", "mean_rating", "continuing", "near_used", "near_shown", "covered",
            "prompt_words", "same_project", "coverage", "ident_match",
            "distilled_coverage", "distilled_bm25", "coverage_sq",
            "long_rank", "long_bm25", "long_rule", "long_commit")


def with_interactions(features: dict[str, float]) -> dict[str, float]:
    """The base features plus the interactions a linear model cannot see by itself: how much of the prompt a
    distilled memory covers (a raw exchange that repeats a vague prompt word for word covers it all, and is
    rarely what the session needs), coverage on the first prompt (where the task is told), the BM25 match of a
    distilled memory, coverage squared (a partial match is not half a full one), and how long the prompt is times
    recall's rank, its BM25 match, a stated rule, a commit."""
    distilled = 1.0 - features.get("raw", 0.0)
    coverage = features.get("coverage", 0.0)
    long = features.get("prompt_words", 0.0)
    return {**features, "distilled_coverage": coverage * distilled,
            "first_coverage": coverage * features.get("first_prompt", 0.0),
            "distilled_bm25": features.get("bm25_rel", 0.0) * distilled, "coverage_sq": coverage * coverage,
            # a long, precise prompt (a bug report) is its own best query: recall's rank and match mean more there
            "long_rank": long * features.get("rank_recip", 0.0), "long_bm25": long * features.get("bm25_rel", 0.0),
            "long_rule": long * features.get("rule_type", 0.0), "long_commit": long * features.get("commit", 0.0)}


@dataclass
class Assessed:
    """One prompt candidate: the hit, its features, its probability and why it is left out (None: shown
    when it fits the limits and the budget)."""

    hit: Hit
    rank: int  # recall rank, 1-based
    features: dict[str, float]
    probability: float = 0.0
    left_out: str | None = None  # 'stale' | 'near-copy' | 'covered' | 'below-bar' | None
    vector: np.ndarray | None = field(default=None, repr=False)


def probability(features: dict[str, float], weights: dict[str, float] | None = None,
                intercept: float | None = None) -> float:
    """sigmoid(b + Σ w·x) with the fitted coefficients (`prompt_bar_model`) unless others are given."""
    weights = WEIGHTS if weights is None else weights
    z = INTERCEPT if intercept is None else intercept
    for name, w in weights.items():
        z += w * features.get(name, 0.0)
    return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


def _leg(hit: Hit, leg: str) -> float | None:
    value = ((getattr(hit, "legs", None) or {}).get(leg) or {}).get("score")
    return None if value is None else float(value)


def _unit(vector: np.ndarray | None) -> np.ndarray | None:
    if vector is None:
        return None
    v = np.asarray(vector, dtype=np.float32)
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else None


def _closest(vector: np.ndarray | None, others: list[np.ndarray]) -> float:
    if vector is None or not others:
        return 0.0
    return float(max(float(vector @ o) for o in others))


def assess(conn: Connection, hits: Sequence[Hit], *, vectors: dict[str, np.ndarray], shown: Sequence[Memory],
           used: set[str], continuing: set[str], prompt: str, first: bool, project: str | None, at: str | None,
           cfg: RankingSettings, is_raw: Callable[[Memory], bool]) -> list[Assessed]:
    """Every hit (recall order) with its features, probability and verdict. `vectors`: content hash →
    embedding for hits and shown memories; `shown`: what this session showed already; `used`: ids the
    agent rated useful in this session; `continuing`: the task in progress; `is_raw(memory)` says raw."""
    raw_of = is_raw
    bm25 = [s for s in (_leg(h, "bm25") for h in hits) if s is not None]
    cos = [s for s in (_leg(h, "vector") for h in hits) if s is not None]
    top_bm25, top_cos = (max(bm25) if bm25 else 0.0), (max(cos) if cos else 0.0)
    history = ranking_store.rating_history(conn, [h.memory.id for h in hits], at)
    shown_vecs = [v for v in (_unit(vectors.get(m.content_hash)) for m in shown) if v is not None]
    used_vecs = [v for v in (_unit(vectors.get(m.content_hash)) for m in shown if m.id in used) if v is not None]
    distilled_shown = [v for m in shown if not raw_of(m) and (v := _unit(vectors.get(m.content_hash))) is not None]
    words = min(len(_WORD.findall(prompt or "")), 20) / 20.0
    out: list[Assessed] = []
    for rank, hit in enumerate(hits, 1):
        memory = hit.memory
        b, c = _leg(hit, "bm25"), _leg(hit, "vector")
        # ratings where a query found it (a prompt, a step): whether it helped when asked. A rating where session
        # start showed it says whether it belongs there, not whether it answers a prompt (ranking's per-phase rule)
        ratings = [score for _, score, at_start in history.get(memory.id, ()) if not at_start]
        vector = _unit(vectors.get(memory.content_hash))
        commit = (memory.source or "") == "git"
        features = {
            "bm25_rel": (b / top_bm25) if b is not None and top_bm25 > 0 else 0.0,
            "has_bm25": 1.0 if b is not None else 0.0,
            "cosine": c if c is not None else 0.0,
            "cosine_gap": (top_cos - c) if c is not None else 1.0,
            "both_legs": 1.0 if b is not None and c is not None else 0.0,
            "rank_recip": 1.0 / rank,
            "raw": 1.0 if raw_of(memory) and not commit else 0.0,  # an exchange, a session's task or summary
            "commit": 1.0 if commit else 0.0,
            "rule_type": 1.0 if memory.type in RULE_TYPES else 0.0,
            "useful_before": min(sum(1 for s in ratings if s >= cfg.useful_rating), 3) / 3.0,
            "low_before": min(sum(1 for s in ratings if s <= cfg.low_rating), 3) / 3.0,
            "mean_rating": (sum(ratings) / len(ratings)) if ratings else 0.0,
            "continuing": 1.0 if memory.id in continuing else 0.0,
            "near_used": _closest(vector, used_vecs),
            "near_shown": _closest(vector, shown_vecs),
            "covered": 0.0,
            "first_prompt": 1.0 if first else 0.0,
            "prompt_words": words,
            "same_project": 1.0 if project is not None and memory.project == project else 0.0,
            **text_features(prompt, memory.content),
        }
        out.append(Assessed(hit, rank, features, vector=vector))
    distilled_pool = [a.vector for a in out if not a.features["raw"] and a.vector is not None]
    for a in out:
        if a.features["raw"]:
            a.features["covered"] = max(_closest(a.vector, distilled_pool), _closest(a.vector, distilled_shown))
        a.features = with_interactions(a.features)
        a.probability = probability(a.features)
    return out


def select(assessed: list[Assessed], cfg: RankingSettings) -> list[Assessed]:
    """The candidates worth showing, most probable first (what the user rejected in review, still recallable,
    after the rest): near-copies of what this session showed and raw
    exchanges a distilled memory covers are left out, then everything below the bar; a candidate that
    near-copies one chosen before it in this order is left out too. Sets `left_out` on every candidate."""
    kept: list[Assessed] = []
    for a in sorted(assessed, key=lambda a: (_rejected(a.hit), -a.probability, a.rank)):
        if getattr(a.hit.memory, "stale_at", None) and not a.hit.memory.pinned:
            a.left_out = "stale"  # a rule whose code is gone (issue 31) waits for review: not shown unasked
        elif a.features["near_shown"] >= cfg.prompt_near_copy or (
                a.vector is not None and any(k.vector is not None and float(a.vector @ k.vector) >= cfg.prompt_near_copy
                                             for k in kept)):
            a.left_out = "near-copy"
        elif a.features["raw"] and a.features["covered"] >= cfg.raw_cover_similarity:
            a.left_out = "covered"
        elif a.probability < cfg.prompt_min_probability:
            a.left_out = "below-bar"
        else:
            kept.append(a)
    return kept


def _rejected(hit: Hit) -> bool:
    review = (getattr(hit.memory, "metadata", None) or {}).get("review")
    return isinstance(review, dict) and review.get("status") == "rejected"
