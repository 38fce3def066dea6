"""How confidently a recall hit answers the query, in words a user reads (issue 35): strong, likely or
weak, instead of the fused RRF score (0.0197 says nothing) or a raw cosine.

The rule reads the hit's legs: the vector leg's cosine between query and memory (the bundled
all-MiniLM-L6-v2; `sessions.prompt_min_similarity` already takes 0.35 as "this memory is about the
prompt") and whether the keyword (BM25) leg found it too:

- strong: cosine >= 0.50, or >= 0.45 with a keyword match;
- likely: cosine >= 0.35, or >= 0.20 with a keyword match (shared words and related meaning);
- weak: anything else — ranked, but not an answer. Recall lists weak hits only when asked (--all).

Without a vector score (a keywords-only preset) a keyword match is likely, else weak. Measured on
the bundled model (tests/retrieval/test_match.py): "how do we deploy billing?" puts the Helm deploy
notes at 0.51-0.57 (strong), the nightly billing cron at 0.40 (likely), a refunds decision at 0.17
(weak); "how do we apply infrastructure changes?" finds "Terraform changes are applied only from CI"
at 0.24 with a keyword match (likely).
"""

from __future__ import annotations

from collections.abc import Mapping

LEVELS = ("strong", "likely", "weak")
CONFIDENT = frozenset({"strong", "likely"})
STRONG, STRONG_WITH_WORDS = 0.50, 0.45
LIKELY, LIKELY_WITH_WORDS = 0.35, 0.20


def match_of(legs: Mapping[str, Mapping[str, float]]) -> str:
    """strong | likely | weak for a hit found by these legs ({leg: {rank, score}})."""
    words = "bm25" in legs
    vector = legs.get("vector")
    if vector is None or "score" not in vector:
        return "likely" if words else "weak"
    cosine = float(vector["score"])
    if cosine >= STRONG or (words and cosine >= STRONG_WITH_WORDS):
        return "strong"
    if cosine >= LIKELY or (words and cosine >= LIKELY_WITH_WORDS):
        return "likely"
    return "weak"
