"""Topic-diversity decay and budget packing (SPEC S4 item 5).

A candidate whose vector is within cosine > threshold of `overlap` already-selected items
has its score multiplied by ((1 - floor) · decay^overlap + floor). Greedy: pick the best
remaining, update the rest, repeat — until the limit or the character budget is reached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from kenning.core.config import TopicDiversity
from kenning.core.types import Selectable

_DEFAULT = TopicDiversity()


T = TypeVar("T", bound=Selectable)


@dataclass
class Packable:
    memory_id: str
    score: float
    chars: int = 0
    vector: np.ndarray | None = None


def diversity_select(
    items: Sequence[T], *, limit: int, budget_chars: int | None = None,
    threshold: float = _DEFAULT.threshold, decay: float = _DEFAULT.decay, floor: float = _DEFAULT.floor,
) -> list[tuple[T, float]]:
    """Return (item, adjusted score) in selection order. threshold, decay, floor: the settings'
    `recall.topic_diversity` (core.config.TopicDiversity, whose defaults these are)."""
    remaining = {i: item.score for i, item in enumerate(items)}
    overlaps = dict.fromkeys(remaining, 0)
    chosen: list[tuple[T, float]] = []
    used = 0
    while remaining and len(chosen) < limit:
        best = max(remaining, key=lambda i: (remaining[i], -i))
        item, adjusted = items[best], remaining.pop(best)
        if budget_chars is not None and used + item.chars > budget_chars:
            continue  # too long for what is left; a shorter one may still fit
        chosen.append((item, adjusted))
        used += item.chars
        if item.vector is None:
            continue
        for i in list(remaining):
            other = items[i].vector
            if other is not None and float(np.dot(item.vector, other)) > threshold:
                overlaps[i] += 1
                factor = (1.0 - floor) * decay ** overlaps[i] + floor
                remaining[i] = items[i].score * factor
    return chosen
