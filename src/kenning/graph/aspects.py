"""Entity aspects: inferring an aspect for a fact, feedback from recall, and decay.

Aspects are named facets of an entity ("configuration", "decisions", …) whose `weight`
moves with use (memory-pipeline-v2 "Aspect Feedback"): memories that were hit by FTS in a
session confirm their aspects (weight += delta × confirmations, clamped to
[min_weight, max_weight]); aspects untouched for `stale_days` lose `decay_rate`, floored at
`min_weight`, every `decay_every_sessions` sessions.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from datetime import timedelta
from typing import TypedDict

from kenning.core.clock import to_iso, utcnow
from kenning.core.config_pipeline import GraphSettings
from kenning.graph.decisions import is_decision_content
from kenning.store import graph as graph_store
from kenning.store.backend import StoreDatabase

_ASPECT_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE))
    for name, pattern in (
        ("errors", r"\b(?:error|exception|fail(?:s|ed|ure)?|bug|crash|traceback|broken|flaky)\b"),
        ("performance", r"\b(?:slow|fast|latency|perf(?:ormance)?|memory usage|cpu|timeout|cache)\b"),
        ("security", r"\b(?:secret|token|auth\w*|password|credential|permission|vulnerab\w*)\b"),
        ("configuration", r"\b(?:config\w*|setting|env(?:ironment)?|port|flag|option|\.ya?ml|\.toml)\b"),
        ("testing", r"\b(?:tests?|pytest|jest|spec|fixture|coverage|assert\w*)\b"),
        ("deployment", r"\b(?:deploy\w*|release|ci|pipeline|docker\w*|kubernetes|prod(?:uction)?)\b"),
        ("dependencies", r"\b(?:depends?|requires?|uses|using|library|package|version|upgrade\w*)\b"),
        ("preferences", r"\b(?:prefers?|likes?|loves?|hates?|favou?rite|wants?)\b"),
    )
)


def infer_aspect(sentence: str) -> str:
    """The aspect a sentence most plausibly describes (deterministic keyword rules)."""
    if is_decision_content(sentence):
        return "decisions"
    for name, pattern in _ASPECT_RULES:
        if pattern.search(sentence):
            return name
    return "general"


@dataclass(frozen=True)
class FeedbackConfig:
    """Aspect feedback and decay parameters (see PipelineSettings.graph)."""

    delta: float = 0.02
    min_weight: float = 0.1
    max_weight: float = 1.0
    stale_days: int = 14
    decay_rate: float = 0.05
    decay_every_sessions: int = 10


_telemetry_lock = threading.Lock()
_telemetry = {"feedback_aspects_updated": 0, "feedback_fts_confirmations": 0,
              "feedback_decayed_aspects": 0, "feedback_propagated_attributes": 0, "sessions_seen": 0}


def feedback_telemetry() -> dict[str, int]:
    """Counters for the pipeline status endpoint."""
    with _telemetry_lock:
        return dict(_telemetry)


class FeedbackResult(TypedDict):
    aspects_updated: int
    confirmations: int
    decayed: int


class SessionFeedback(FeedbackResult):
    session_key: str


def apply_fts_feedback(db: StoreDatabase, memory_ids: list[str], cfg: FeedbackConfig = FeedbackConfig(),
                       session_key: str | None = None) -> FeedbackResult:
    """Raise the weight of aspects whose memories were confirmed by FTS hits this session.

    `memory_ids` are the memories with fts_hit_count > 0 in the session (the sessions
    capability passes them). Runs decay every `decay_every_sessions` calls.
    """
    counts = graph_store.aspects_for_memories(db.reader(), list(dict.fromkeys(memory_ids)))
    increments = {aspect_id: cfg.delta * n for aspect_id, n in counts.items()}
    with db.with_write_tx() as conn:
        updated = graph_store.bump_aspect_weights(
            conn, increments, min_weight=cfg.min_weight, max_weight=cfg.max_weight
        )
        if session_key is not None:
            graph_store.mark_feedback_applied(conn, session_key, sum(counts.values()), updated)
    with _telemetry_lock:
        _telemetry["feedback_aspects_updated"] += updated
        _telemetry["feedback_fts_confirmations"] += sum(counts.values())
        _telemetry["sessions_seen"] += 1
        run_decay = _telemetry["sessions_seen"] % cfg.decay_every_sessions == 0
    decayed = decay_aspects(db, cfg) if run_decay else 0
    return {"aspects_updated": updated, "confirmations": sum(counts.values()), "decayed": decayed}


def apply_pending_sessions(db: StoreDatabase, cfg: FeedbackConfig = FeedbackConfig(),
                           limit: int = 20) -> list[SessionFeedback]:
    """Feed back every ended session not yet applied (each session counts once)."""
    done: list[SessionFeedback] = []
    for key in graph_store.sessions_awaiting_feedback(db.reader(), limit):
        memory_ids = graph_store.fts_confirmed_memories(db.reader(), key)
        done.append({"session_key": key, **apply_fts_feedback(db, memory_ids, cfg, session_key=key)})
    return done


def decay_aspects(db: StoreDatabase, cfg: FeedbackConfig = FeedbackConfig()) -> int:
    """Decay aspects not updated for `stale_days`. Returns how many were reduced."""
    stale_before = to_iso(utcnow() - timedelta(days=cfg.stale_days))
    with db.with_write_tx() as conn:
        n = graph_store.decay_stale_aspects(
            conn, stale_before=stale_before, rate=cfg.decay_rate, min_weight=cfg.min_weight
        )
    with _telemetry_lock:
        _telemetry["feedback_decayed_aspects"] += n
    return n


def feedback_config(graph_settings: GraphSettings) -> FeedbackConfig:
    """FeedbackConfig from `settings.pipeline.graph`."""
    g = graph_settings
    return FeedbackConfig(delta=g.feedback_delta, min_weight=g.feedback_min_weight, max_weight=g.feedback_max_weight,
                          stale_days=g.aspect_stale_days, decay_rate=g.aspect_decay_rate,
                          decay_every_sessions=g.aspect_decay_every_sessions)
