"""Pure retrieval stages: fusion, query type, diversity decay, effective_score."""

from __future__ import annotations

import numpy as np
import pytest

from kenning.core.types import Memory
from kenning.retrieval.diversity import Packable, diversity_select
from kenning.retrieval.fusion import weighted_rrf
from kenning.retrieval.query_type import detect_query_type
from kenning.retrieval.scoring import effective_score
from kenning.store.search import fts_query


def test_weighted_rrf_scores_and_legs():
    fused = weighted_rrf({"bm25": [("a", 9.0), ("b", 3.0)], "vector": [("b", 0.9), ("c", 0.5)]},
                         {"bm25": 0.25, "vector": 0.5}, k=60)
    scores = {h.memory_id: h.score for h in fused}
    assert scores["b"] == pytest.approx(0.25 / 62 + 0.5 / 61)
    assert scores["a"] == pytest.approx(0.25 / 61)
    assert [h.memory_id for h in fused] == ["b", "c", "a"]
    assert fused[0].legs == {"bm25": {"rank": 2, "score": 3.0}, "vector": {"rank": 1, "score": 0.9}}


@pytest.mark.parametrize("query, expected", [
    ("where is parseConfig defined", "identifier"),
    ("what does load_settings do", "identifier"),
    ("src/kenning/store/db.py", "identifier"),
    ("how do we deploy to staging", "semantic"),
])
def test_query_type(query, expected):
    assert detect_query_type(query) == expected
    assert detect_query_type("how do we deploy", ["analyzeImpact"]) == "structural"


def test_fts_query_is_safe_and_drops_stop_words():
    assert fts_query('what is "the" AND NOT (x*') == '"not" OR "x"'
    assert fts_query("the") == '"the"'  # only stop words: keep them rather than match nothing
    assert fts_query("") == ""


def test_diversity_decay_formula_and_budget():
    same = np.array([1.0, 0.0], dtype=np.float32)
    other = np.array([0.0, 1.0], dtype=np.float32)
    items = [Packable("a", 1.0, 10, same), Packable("b", 0.9, 10, same), Packable("c", 0.5, 10, other)]
    chosen = diversity_select(items, limit=3, threshold=0.85, decay=0.5, floor=0.1)
    assert [i.memory_id for i, _ in chosen] == ["a", "c", "b"]
    assert chosen[2][1] == pytest.approx(0.9 * ((1 - 0.1) * 0.5 + 0.1))
    budgeted = diversity_select(items, limit=3, budget_chars=20)
    assert [i.memory_id for i, _ in budgeted] == ["a", "c"]


def test_effective_score():
    base = dict(id="x", content="c", normalized_content="c", content_hash="h", importance=0.8,
                created_at="2025-01-01T00:00:00.000Z")
    assert effective_score(Memory(**base), "2025-01-11T00:00:00Z") == pytest.approx(0.8 * 0.95 ** 10)
    accessed = Memory(**base, last_accessed_at="2025-01-10T00:00:00.000Z")
    assert effective_score(accessed, "2025-01-11T00:00:00Z") == pytest.approx(0.8 * 0.95)
    assert effective_score(Memory(**{**base, "pinned": True}), "2030-01-01T00:00:00Z") == 1.0
    assert effective_score(Memory(**{**base, "superseded_by": "y"})) == 0.0
    assert effective_score(Memory(**{**base, "is_deleted": True})) == 0.0
