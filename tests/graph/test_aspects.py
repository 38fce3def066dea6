"""Aspect feedback from a session's FTS hits (once per ended session) and aspect decay."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kenning.core.clock import now_iso, to_iso, utcnow
from kenning.core.types import MemoryDraft
from kenning.graph.aspects import FeedbackConfig, apply_pending_sessions, decay_aspects, infer_aspect
from kenning.store import graph as graph_store
from kenning.store import sessions as session_store


def _aspect_weights(kenning, name):
    entity = graph_store.find_entity(kenning.db.reader(), name)
    return {a["name"]: a["weight"] for a in graph_store.entity_aspects(kenning.db.reader(), entity.id)}


def test_infer_aspect_rules():
    assert infer_aspect("We switched from MySQL to PostgreSQL") == "decisions"
    assert infer_aspect("Redis timeout errors crash the worker") == "errors"
    assert infer_aspect("Set the port in config.yaml") == "configuration"
    assert infer_aspect("Alice went hiking") == "general"


def test_session_fts_hits_raise_aspect_weights_once(kenning):
    hit = kenning.remember(MemoryDraft(content="Redis timeout errors crash the billing worker")).id
    kenning.remember(MemoryDraft(content="Redis is configured in config.yaml with port 6380"))
    at = now_iso()
    with kenning.db.with_write_tx() as conn:
        session_store.create_session(conn, "s1", harness="test", project=None, cwd=None, context=None, started_at=at)
        session_store.insert_candidates(conn, "s1", [{"memory_id": hit, "source": "prompt", "final_score": 1.0,
                                                     "rank": 1}], at)
        session_store.increment_fts_hits(conn, "s1", [hit])
        session_store.create_session(conn, "s2", harness="test", project=None, cwd=None, context=None, started_at=at)
    before = _aspect_weights(kenning, "Redis")
    assert apply_pending_sessions(kenning.db) == []  # nothing ended yet
    with kenning.db.with_write_tx() as conn:
        session_store.end_session(conn, "s1", now_iso())
    cfg = FeedbackConfig(delta=0.1)
    (done,) = apply_pending_sessions(kenning.db, cfg)
    assert done["session_key"] == "s1" and done["confirmations"] == 1
    after = _aspect_weights(kenning, "Redis")
    assert after["errors"] == pytest.approx(before["errors"] + 0.1)
    assert after["configuration"] == before["configuration"]  # not searched for, not confirmed
    assert apply_pending_sessions(kenning.db, cfg) == []  # each session counts once


def test_stale_aspects_decay_to_the_floor(kenning):
    kenning.remember(MemoryDraft(content="Grafana dashboards are slow to load"))
    with kenning.db.with_write_tx() as conn:
        conn.execute("UPDATE entity_aspects SET updated_at = ?, weight = 0.12",
                     (to_iso(utcnow() - timedelta(days=30)),))
    assert decay_aspects(kenning.db, FeedbackConfig(decay_rate=0.05, min_weight=0.1)) == 1
    assert _aspect_weights(kenning, "Grafana") == {"performance": pytest.approx(0.1)}
    assert decay_aspects(kenning.db, FeedbackConfig(decay_rate=0.05, min_weight=0.1)) == 0
