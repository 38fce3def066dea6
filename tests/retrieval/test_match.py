"""retrieval.match on the bundled model (issue 35): the levels a user reads for a recall hit follow the
cosine between query and memory and whether the keyword leg found it too — the figures quoted in
retrieval/match.py's docstring are measured here, with the real all-MiniLM-L6-v2."""

from __future__ import annotations

import numpy as np
import pytest

from kenning.core.config import load_settings
from kenning.providers.registry import build_embedding_provider
from kenning.retrieval.match import match_of


@pytest.fixture(scope="module")
def cosine(tmp_path_factory):
    embedder = build_embedding_provider(load_settings({"KENNING_HOME": str(tmp_path_factory.mktemp("m"))}).embedding)

    def of(query: str, text: str) -> float:
        q, t = np.asarray(embedder.embed_query(query)), np.asarray(embedder.embed_many([text])[0])
        return float(q @ t / (np.linalg.norm(q) * np.linalg.norm(t)))
    return of


def test_a_keyword_far_down_the_list_is_not_evidence():
    assert match_of({"vector": {"rank": 3, "score": 0.339}, "bm25": {"rank": 2, "score": 2.0}}) == "likely"
    assert match_of({"vector": {"rank": 3, "score": 0.339}, "bm25": {"rank": 14, "score": 0.9}}) == "weak"


@pytest.mark.parametrize("query, memory, keywords, level", [
    ("how do we deploy billing?", "We deploy the billing service with Helm on Friday mornings only", True, "strong"),
    ("how do we deploy billing?", "Billing deploys go through `helm upgrade billing ./chart` from the release branch",
     True, "strong"),
    ("how do we deploy billing?", "Invoices are generated nightly by the billing cron job", True, "likely"),
    ("how do we deploy billing?", "Decision: refunds go through the Stripe Refunds API only", False, "weak"),
    ("how do we apply infrastructure changes?", "Terraform changes are applied only from CI with terraform apply",
     True, "likely"),
    ("what is the office wifi password?", "The dashboard CSS uses Tailwind utility classes", False, "weak"),
])
def test_levels_on_the_bundled_model(cosine, query, memory, keywords, level):
    legs = {"vector": {"rank": 1, "score": cosine(query, memory)}}
    if keywords:
        legs["bm25"] = {"rank": 1, "score": 3.2}
    assert match_of(legs) == level, legs


def test_levels_without_a_vector_score():
    assert match_of({"bm25": {"rank": 2, "score": 1.1}}) == "likely"  # a keywords-only preset: its top matches
    assert match_of({"bm25": {"rank": 9, "score": 0.4}}) == "weak"
    assert match_of({"graph": {"rank": 1, "score": 0.5}}) == "weak"
    assert match_of({"vector": {"rank": 1, "score": -0.11}}) == "weak"
