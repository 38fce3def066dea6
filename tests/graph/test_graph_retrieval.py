"""Graph leg, graph boost, dampening, rerank and hints in recall (real store, real model)."""

from __future__ import annotations

import time

import pytest

from kenning.core.types import MemoryDraft, MemoryFilter
from kenning.retrieval.config import PRESETS
from kenning.retrieval.dampening import DampeningParams, gravity_factor, hub_factor, resolution_factor
from kenning.retrieval.fusion import FusedHit
from kenning.retrieval.graph_leg import graph_lookup, query_tokens
from kenning.retrieval.hints import merge_by_max
from kenning.retrieval.rerank import RerankCandidate, rerank_hits
from kenning.store import hints as hint_store

NOTES = [
    "We switched from MySQL to PostgreSQL for billing",
    "PostgreSQL connection pool size is 20 for the invoices job",
    "Alice likes hiking in the Alps on weekends",
    "Redis caches session tokens for 15 minutes",
]


@pytest.fixture
def stocked(kenning):
    ids = [kenning.remember(MemoryDraft(content=text, project="p")).id for text in NOTES]
    return kenning, ids


def test_graph_lookup_walks_one_hop_to_linked_memories(stocked):
    kenning, ids = stocked
    found = graph_lookup(kenning.db.reader(), "what happened to mysql?")
    assert found.entities == ["MySQL"] and "PostgreSQL" in found.neighbors
    ranked = [memory_id for memory_id, _ in found.ranked()]
    assert ranked[0] == ids[0]  # direct mention first
    assert ids[1] in ranked  # reached through MySQL -replaced_by-> PostgreSQL
    assert ids[2] not in ranked and ids[3] not in ranked
    assert not found.timed_out and found.error is None


def test_graph_lookup_respects_filters(stocked):
    kenning, _ = stocked
    assert graph_lookup(kenning.db.reader(), "mysql", filters=MemoryFilter(project="other")).scores == {}


def test_graph_lookup_is_deadline_bounded(stocked):
    kenning, _ = stocked
    found = graph_lookup(kenning.db.reader(), "mysql postgresql", deadline_ms=0.0)
    assert found.timed_out
    assert found.scores == {}  # past the deadline after step 1: entities only, no memories yet


def test_graph_lookup_fails_empty(stocked, tmp_path):
    kenning, _ = stocked
    from kenning.store.db import Database

    broken = Database(tmp_path / "empty.db").reader()  # no tables at all
    found = graph_lookup(broken, "mysql")
    assert found.scores == {} and found.error


def test_hub_entities_are_not_walked(kenning):
    drafts = [MemoryDraft(content=f"Kubernetes node pool {i} autoscaling note") for i in range(24)]
    kenning.remember_many(drafts)
    mesh = kenning.remember(MemoryDraft(content="Kubernetes ingress goes through Istio")).id
    conn = kenning.db.reader()
    assert graph_lookup(conn, "kubernetes").scores == {}  # 25 mentions > hub threshold of 20
    found = graph_lookup(conn, "kubernetes istio")
    assert found.entities == ["Istio"] and list(found.scores) == [mesh]


def test_query_tokens_drop_stop_words_and_add_pairs():
    assert query_tokens("Which database does Acme Billing use?") == [
        "database", "acme", "billing", "use", "database acme", "acme billing", "billing use"]


def test_recall_with_the_graph_preset_marks_graph_hits(stocked):
    kenning, ids = stocked
    hits = kenning.recall("mysql", config="graph", limit=5, track_access=False)
    by_id = {h.memory.id: h for h in hits}
    assert ids[0] in by_id and by_id[ids[0]].legs["graph"]["rank"] == 1
    hub_free = kenning.recall("postgresql", config="graph", limit=5, track_access=False)
    assert {h.memory.id for h in hub_free if "graph" in h.legs} == {ids[0], ids[1]}


def test_every_extra_preset_runs_end_to_end(stocked):
    kenning, ids = stocked
    for name in ("graph", "dampening", "rerank", "hints", "full"):
        hits = kenning.recall("which database does billing use", config=name, limit=3, track_access=False)
        assert hits and hits[0].memory.id in ids[:2], name


def test_dampening_factors():
    p = DampeningParams()
    q = {"database", "billing"}
    assert gravity_factor(q, "Alice likes hiking", {"vector"}, 0.9, p) == 0.5
    assert gravity_factor(q, "Alice likes hiking", {"vector", "bm25"}, 0.9, p) == 1.0  # lexical match came too
    assert gravity_factor(q, "Alice likes hiking", {"vector"}, 0.2, p) == 1.0  # low scores are left alone
    assert gravity_factor(q, "billing databases", {"vector"}, 0.9, p) == 1.0  # light stemming
    assert hub_factor([50, 70], 40, p) == 0.7 and hub_factor([50, 3], 40, p) == 1.0 and hub_factor([], 40, p) == 1.0
    long_text = "x" * 60
    assert resolution_factor("constraint", long_text, p) == 1.2
    assert resolution_factor("fact", long_text + " on 2024-03-01", p) == pytest.approx(1.1)
    assert resolution_factor("fact", long_text + " in March", p) == pytest.approx(1.1)
    assert resolution_factor("decision", "short", p) == 1.0
    assert resolution_factor("constraint", long_text, DampeningParams(resolution_enabled=False)) == 1.0


def _hits(n):
    return [FusedHit(f"m{i}", 1.0 / (i + 1)) for i in range(n)]


def test_rerank_reorders_the_head_and_keeps_the_tail():
    hits = _hits(5)
    cands = [RerankCandidate(h.memory_id, h.score, "") for h in hits[:3]]
    out = rerank_hits("q", hits, cands, lambda q, c: [(x.memory_id, -x.score) for x in c], top_n=3, timeout_ms=2000)
    assert [h.memory_id for h in out] == ["m2", "m1", "m0", "m3", "m4"]


def test_rerank_timeout_and_errors_keep_the_fused_order():
    def slow(query, cands):
        time.sleep(1.0)
        return [(c.memory_id, 0.0) for c in reversed(cands)]

    def broken(query, cands):
        raise RuntimeError("model exploded")

    for reranker, timeout in ((slow, 50), (broken, 2000)):
        hits = _hits(4)
        cands = [RerankCandidate(h.memory_id, h.score, "") for h in hits]
        out = rerank_hits("q", hits, cands, reranker, top_n=4, timeout_ms=timeout)
        assert [h.memory_id for h in out] == ["m0", "m1", "m2", "m3"]
        assert all("rerank" not in h.reasons for h in out)


def test_hints_merge_by_max_not_sum():
    merged = merge_by_max([("a", 3.0), ("b", 1.0)], [("b", 2.0), ("c", 0.5), ("a", 1.0)], 10)
    assert merged == [("a", 3.0), ("b", 2.0), ("c", 0.5)]


def test_hint_only_match_is_found_with_hints_enabled(stocked):
    kenning, ids = stocked
    with kenning.db.with_write_tx() as conn:
        hint_store.add_hints(conn, ids[3], ["where do login sessions expire?"])
    without = [h.memory.id for h in kenning.recall("expire", config="bm25", limit=5, track_access=False)]
    with_hints = kenning.recall("expire", config=PRESETS["bm25"].with_(
        extras=PRESETS["hints"].extras), limit=5, track_access=False)
    assert ids[3] not in without
    assert [h.memory.id for h in with_hints] == [ids[3]]
