"""How confidently a recall hit answers the query, in words a user reads (issue 35): strong, likely or
weak, instead of the fused RRF score (0.0197 says nothing) or a raw cosine.

The rule reads the hit's legs: the vector leg's cosine between query and memory (the bundled
all-MiniLM-L6-v2) and whether the keyword (BM25) leg ranked it among its first three:

- strong: cosine >= 0.50, or >= 0.45 with a top-3 keyword match;
- likely: cosine >= 0.40, or >= 0.22 with a top-3 keyword match (the query's words, and related meaning);
- weak: anything else — ranked, but not an answer. Recall lists weak hits only when asked (--all).

Without a vector score (a keywords-only preset) a top-3 keyword match is likely, else weak. Measured on
the bundled model (tests/retrieval/test_match.py, and the dashboard's week of replayed sessions): "how
are invoices numbered?" puts "Invoice numbers come from a PostgreSQL sequence" at 0.56 (strong) and the
invoice PDF note at 0.43 (likely), a PaymentIntent gotcha at 0.35 with no keyword (weak); "how do we apply
infrastructure changes?" finds "Terraform changes are applied only from CI" at 0.24, first by keywords
(likely); "what is the office wifi password?" tops out at 0.24 with no keyword (nothing confident). A
looser keyword rule (any keyword rank, 0.20) called 13 hits of "how do we deploy billing?" likely —
routing and testing notes that share the word "api" or "billing" — which is the noise a user saw.
"""

from __future__ import annotations

from collections.abc import Mapping

LEVELS = ("strong", "likely", "weak")
CONFIDENT = frozenset({"strong", "likely"})
STRONG, STRONG_WITH_WORDS = 0.50, 0.45
LIKELY, LIKELY_WITH_WORDS = 0.40, 0.22
TOP_KEYWORD_RANK = 3


def match_of(legs: Mapping[str, Mapping[str, float]]) -> str:
    """strong | likely | weak for a hit found by these legs ({leg: {rank, score}})."""
    keyword = legs.get("bm25")
    words = keyword is not None and 0 < float(keyword.get("rank") or TOP_KEYWORD_RANK + 1) <= TOP_KEYWORD_RANK
    vector = legs.get("vector")
    if vector is None or "score" not in vector:
        return "likely" if words else "weak"
    cosine = float(vector["score"])
    if cosine >= STRONG or (words and cosine >= STRONG_WITH_WORDS):
        return "strong"
    if cosine >= LIKELY or (words and cosine >= LIKELY_WITH_WORDS):
        return "likely"
    return "weak"
