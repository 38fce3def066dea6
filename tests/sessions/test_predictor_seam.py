"""The predictor seam at session-start, with a stand-in that follows sessions.context.SessionPredictor."""

from __future__ import annotations

import pytest

from kenning.core.events import SessionEnded, SessionStarted
from kenning.core.types import MemoryDraft
from kenning.predictor.fusion import Fused


@pytest.fixture(autouse=True)
def _no_cut(kenning):
    """What these tests check is the seam's order, not the latency budget: a loaded machine must not cut a stage
    (the [postgres] case failed once at load 35 with the default 250 ms)."""
    kenning.settings.sessions.latency_budget_ms = 20_000


class StandInPredictor:
    """score / fuse / status_line / on_session_end as documented in kenning.predictor.service."""

    def __init__(self, answer: bool = True, explore: bool = False) -> None:
        self.answer, self.explore = answer, explore
        self.contexts, self.ended = [], []

    def score(self, session_context, candidates):
        self.contexts.append((session_context, candidates))
        if not self.answer:
            return None
        # prefer the least important memories: the opposite of the baseline
        return {c.id: 1.0 - c.importance for c in candidates}

    def fuse(self, baseline_ranked_ids, predictor_scores, *, top_k=None):
        ranked = sorted(predictor_scores, key=lambda m: -predictor_scores[m])
        rows = [Fused(m, 1.0 / (i + 1), baseline_ranked_ids.index(m) + 1, i + 1, "predictor")
                for i, m in enumerate(ranked)]
        if self.explore and top_k:
            last = baseline_ranked_ids[0]
            rows = [r for r in rows if r.memory_id != last]
            rows.insert(top_k - 1, Fused(last, 0.5, 1, len(ranked), "exploration"))
        return rows

    def status_line(self):
        return "[predictor: active | success_rate=0.72 | α=0.28 | model_v3 | 142 sessions]"

    def alpha(self):
        return 0.28

    def on_session_end(self, session_key):
        self.ended.append(session_key)


def _seed(kenning, project):
    return [r.id for r in kenning.remember_many([
        MemoryDraft(content=f"Memory {i} about subsystem {chr(65 + i)} and its quirks number {i * 7}",
                    importance=round(0.1 + i * 0.04, 2), project=project, applies="project")  # may open sessions
        for i in range(20)])]


def test_predictor_rankings_are_recorded_and_fused(kenning, monkeypatch):
    ids = _seed(kenning, "seam")
    stand_in = StandInPredictor()
    monkeypatch.setattr(kenning.sessions.deps, "predictor", stand_in)
    out = kenning.sessions.session_start(SessionStarted(session_key="p1", project="seam", context="subsystem quirks"))
    assert out["status_line"].startswith("[predictor: active") and "[predictor:" not in out["inject"]
    assert out["predictor_used"] is True
    context, candidates = stand_in.contexts[0]
    assert context.session_key == "p1" and context.embedding is not None and context.text
    assert all(c.embedding is not None and c.id for c in candidates)
    rows = {r["memory_id"]: r for r in kenning.sessions.detail("p1")["memories"]}
    assert len(rows) == 20
    assert all(r["predictor_rank"] and r["baseline_rank"] and r["predictor_score"] is not None for r in rows.values())
    least = ids[0]  # lowest importance: last for the baseline, first for the predictor
    assert rows[least]["baseline_rank"] == 20 and rows[least]["predictor_rank"] == 1
    assert rows[least]["was_injected"] == 1 and rows[least]["source"] == "predictor"
    kenning.sessions.session_end(SessionEnded(session_key="p1"), wait=True)
    assert stand_in.ended == ["p1"]


def test_predictor_none_means_baseline_and_exploration_stays_injected(kenning, monkeypatch):
    ids = _seed(kenning, "seam2")
    monkeypatch.setattr(kenning.sessions.deps, "predictor", StandInPredictor(answer=False))
    out = kenning.sessions.session_start(SessionStarted(session_key="p2", project="seam2"))
    rows = {r["memory_id"]: r for r in kenning.sessions.detail("p2")["memories"]}
    assert out["predictor_used"] is False
    assert all(r["predictor_rank"] is None and r["source"] == "effective" for r in rows.values())
    assert rows[ids[-1]]["was_injected"] == 1  # highest importance leads the baseline

    monkeypatch.setattr(kenning.sessions.deps, "predictor", StandInPredictor(explore=True))
    kenning.sessions.session_start(SessionStarted(session_key="p3", project="seam2"))
    rows = {r["memory_id"]: r for r in kenning.sessions.detail("p3")["memories"]}
    explored = [r for r in rows.values() if r["source"] == "exploration"]
    assert len(explored) == 1 and explored[0]["was_injected"] == 1
