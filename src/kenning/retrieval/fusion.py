"""Weighted reciprocal rank fusion: a small pure function over ranked lists."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FusedHit:
    memory_id: str
    score: float
    legs: dict[str, dict[str, float]] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # ids collapsed into this hit (its provenance)


def weighted_rrf(
    ranked: dict[str, list[tuple[str, float]]], weights: dict[str, float], k: int = 60
) -> list[FusedHit]:
    """score(m) = Σ_leg weight_leg / (k + rank_leg(m)), rank starting at 1.

    Each hit remembers, per leg, its rank and the leg's own score.
    """
    fused: dict[str, FusedHit] = {}
    for leg, hits in ranked.items():
        weight = weights.get(leg, 0.0)
        for rank, (memory_id, leg_score) in enumerate(hits, start=1):
            hit = fused.setdefault(memory_id, FusedHit(memory_id, 0.0))
            hit.score += weight / (k + rank)
            hit.legs[leg] = {"rank": rank, "score": round(float(leg_score), 6)}
    return sorted(fused.values(), key=lambda h: (-h.score, h.memory_id))
