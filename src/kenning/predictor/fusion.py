"""Rank fusion and the per-session comparison: small pure functions over ids and numbers.

    RRF(m) = α/(k + rank_baseline(m)) + (1 − α)/(k + rank_predictor(m)),  k = 12,
    a memory missing from one ranking takes rank n + 1 there (n = candidate count);
    a memory *unseen* by the predictor (no history for this user: never rated, FTS-matched or
    touched) takes its baseline rank in the predictor's term too — the model knows nothing
    about it, so it neither buries nor lifts it (issue 11: new notes and a drift's new
    preferences were buried under remembered ones; offline on bench/predictor_sim data,
    session-start P@12 at the α used 0.544 → 0.558, at α 0.2 0.498 → 0.542, baseline 0.512).
    NDCG@k = DCG@k / IDCG@k, DCG = Σ gain_i / log2(i + 2), gains = max(0, relevance).
    Evaluation pool = top-10 baseline ∪ top-10 predictor ∪ injected, less the candidates whose
    label is unknown (not shown, no signal, rated useful before: labels.py); both rankings are
    restricted to the pool (keeping their order) and scored against the same relevance (session
    end passes labels.comparison_relevance: agent ratings, what the transcript touched, an
    independent judge — not the training labels, which credit whatever was shown).
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from kenning.predictor import constants as C


@dataclass(frozen=True)
class Fused:
    memory_id: str
    final_score: float
    baseline_rank: int | None
    predictor_rank: int | None
    source: str  # 'effective' | 'predictor' | 'both' | 'exploration'


class PredictorScores(dict[str, float]):
    """{memory_id: score} as Predictor.score answers, plus `unseen`: the ids it had no history
    for (see rrf_fuse). A plain dict everywhere else; Predictor.fuse and own_order read `unseen`."""

    def __init__(self, scores: Mapping[str, float], unseen: Iterable[str] = ()) -> None:
        super().__init__(scores)
        self.unseen = frozenset(unseen)


def unseen_of(scores: Mapping[str, float]) -> frozenset[str]:
    """The ids `scores` marks unseen (PredictorScores), none for a plain mapping."""
    return scores.unseen if isinstance(scores, PredictorScores) else frozenset()


def rank_by_score(scores: Mapping[str, float]) -> list[str]:
    """Ids by descending score; ties broken by id so the order is deterministic."""
    return sorted(scores, key=lambda i: (-scores[i], i))


def own_order(scores: Mapping[str, float], baseline_ids: Sequence[str], unseen: Collection[str] = ()) -> list[str]:
    """The predictor's order of the ids it scored, as the interleaving drafts from it: each
    *unseen* id (see rrf_fuse) keeps its place in the baseline's order of the scored ids, and the
    seen ones fill the other places by descending score (ties by id). The model knows nothing
    about an unseen memory, so its score must neither bury nor lift it there either: a drift's new
    conventions, created after the last training, become picks both rankings share instead of the
    baseline's, and the draft compares the predictor only where it has learned something (issue 32).
    An unseen id the baseline does not rank is ordered by its score like a seen one."""
    scored = [m for m in dict.fromkeys(baseline_ids) if m in scores]
    fixed = {i: m for i, m in enumerate(scored) if m in unseen}
    placed = set(fixed.values())
    rest = iter(m for m in rank_by_score(scores) if m not in placed)
    return [fixed[i] if i in fixed else next(rest) for i in range(len(scores))]


def rrf_fuse(
    baseline_ids: Sequence[str], predictor_ids: Sequence[str] | None, alpha: float, k: int = 12,
    top_k: int | None = None, unseen: Collection[str] = (),
) -> list[Fused]:
    """Fuse two rankings of one candidate set; sorted by final score (ties: baseline order).
    `unseen`: ids the predictor has no history for; they take their baseline rank in both terms."""
    candidates = list(dict.fromkeys([*baseline_ids, *(predictor_ids or [])]))
    n = len(candidates)
    b_rank = {m: i + 1 for i, m in enumerate(baseline_ids)}
    p_rank = {m: i + 1 for i, m in enumerate(predictor_ids)} if predictor_ids is not None else {}
    cut = top_k if top_k is not None else n
    b_top = set(list(baseline_ids)[:cut])
    p_top = set(list(predictor_ids or [])[:cut])
    fused = []
    for m in candidates:
        rb = b_rank.get(m, n + 1)
        if predictor_ids is None:
            score = 1.0 / (k + rb)
        else:
            rp = rb if m in unseen and m in b_rank else p_rank.get(m, n + 1)
            score = alpha / (k + rb) + (1.0 - alpha) / (k + rp)
        source = "both" if m in b_top and m in p_top else ("predictor" if m in p_top and m not in b_top else "effective")
        fused.append(Fused(m, score, b_rank.get(m), p_rank.get(m), source))
    fused.sort(key=lambda f: (-f.final_score, f.baseline_rank or n + 1, f.memory_id))
    return fused


def explore(fused: list[Fused], top_k: int, rate: float, rng: random.Random, enabled: bool) -> list[Fused]:
    """With probability `rate`, put the non-injected candidate with the largest rank
    disagreement into the last injected slot (source='exploration'). Off when not `enabled`
    (cold start) or when there is no predictor ranking."""
    if not enabled or top_k <= 0 or len(fused) <= top_k or rng.random() >= rate:
        return fused
    rest = [f for f in fused[top_k:] if f.baseline_rank is not None and f.predictor_rank is not None]
    if not rest:
        return fused
    pick = max(rest, key=lambda f: (abs((f.baseline_rank or 0) - (f.predictor_rank or 0)), -fused.index(f)))
    last = fused[top_k - 1]
    promoted = Fused(pick.memory_id, last.final_score, pick.baseline_rank, pick.predictor_rank, "exploration")
    demoted = Fused(last.memory_id, pick.final_score, last.baseline_rank, last.predictor_rank, last.source)
    out = list(fused)
    out[top_k - 1], out[fused.index(pick)] = promoted, demoted  # swap places and scores
    return out


def ndcg_at_k(ranking: Sequence[str], relevance: Mapping[str, float], k: int = C.NDCG_K) -> float:
    gains = {m: max(0.0, float(v)) for m, v in relevance.items()}
    dcg = sum(gains.get(m, 0.0) / math.log2(i + 2) for i, m in enumerate(list(ranking)[:k]))
    ideal = sorted(gains.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def evaluation_pool(baseline: Sequence[str], predictor: Sequence[str], injected: Iterable[str],
                    k: int = C.NDCG_K) -> list[str]:
    return list(dict.fromkeys([*baseline[:k], *predictor[:k], *injected]))


def restrict(ranking: Sequence[str], pool: Sequence[str]) -> list[str]:
    """The pool in the order `ranking` gives it (pool members it lacks go last, in pool order)."""
    position = {m: i for i, m in enumerate(ranking)}
    return sorted(pool, key=lambda m: (position.get(m, len(position)), pool.index(m)))


@dataclass(frozen=True)
class Comparison:
    predictor_ndcg: float
    baseline_ndcg: float
    margin: float
    predictor_won: bool
    pool: list[str]
    predictor_top: list[str]
    baseline_top: list[str]
    verdict: bool = True  # False: nothing in the pool was shown to be wanted


def compare(baseline: Sequence[str], predictor: Sequence[str], injected: Iterable[str],
            relevance: Mapping[str, float], k: int = C.NDCG_K, unjudged: Collection[str] = ()) -> Comparison:
    """`unjudged`: candidates whose label the session cannot know (labels.py "unknown"); they
    leave the pool (a condensed list), so neither ranking is scored on a guess. When no
    candidate in the pool has a positive relevance the session gives no verdict either way
    (`verdict` False: both NDCGs 0, a tie the EMA must not count)."""
    pool = [m for m in evaluation_pool(baseline, predictor, injected, k) if m not in unjudged]
    pool_relevance = {m: relevance.get(m, 0.0) for m in pool}
    p_rank, b_rank = restrict(predictor, pool), restrict(baseline, pool)
    p, b = ndcg_at_k(p_rank, pool_relevance, k), ndcg_at_k(b_rank, pool_relevance, k)
    verdict = any(v > 0 for v in pool_relevance.values())
    return Comparison(p, b, p - b, p > b, pool, list(predictor[:k]), list(baseline[:k]), verdict)


def fts_overlap(injected: Iterable[str], fts_hits: Mapping[str, int]) -> float | None:
    """Share of injected memories matched by FTS during the session."""
    chosen = list(injected)
    if not chosen:
        return None
    return sum(1 for m in chosen if fts_hits.get(m, 0) > 0) / len(chosen)
