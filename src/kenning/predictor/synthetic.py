"""A small simulated user for predictor tests and benchmarks (no model, no network).

Latent rules: each project owns a few topics; mornings go to one project and evenings to
another; a session needs the memories of its project's "current" topic. Memories get unit
vectors near their topic centroid, the session context sits near the needed topic, the
baseline ranks by importance (which ignores need), and the judge / agent / FTS signals are
drawn from the ground truth with a little noise. Everything is written through the store
functions the real daemon uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import numpy as np

from kenning.core.clock import to_iso
from kenning.core.types import MemoryDraft
from kenning.store import memories as mem_store
from kenning.store import predictor as pred_store
from kenning.store import sessions as sess_store
from kenning.store import vectors
from kenning.store.backend import StoreDatabase

MODEL = "synthetic-embedder"


@dataclass
class SyntheticUser:
    dims: int = 384
    projects: tuple[str, ...] = ("alpha", "beta", "gamma")
    topics_per_project: int = 4
    memories_per_topic: int = 12
    candidates: int = 60
    top_k: int = 10
    seed: int = 0
    start: datetime = field(default_factory=lambda: datetime(2026, 1, 5, 9, tzinfo=timezone.utc))
    memory_ids: list[str] = field(default_factory=list)
    memory_topic: dict[str, tuple[str, int]] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    centroids: dict[tuple[str, int], np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def _unit(self, v: np.ndarray) -> np.ndarray:
        return (v / np.linalg.norm(v)).astype(np.float32)

    def populate(self, db: StoreDatabase) -> None:
        """Insert the memory corpus with embeddings."""
        created = to_iso(self.start - timedelta(days=60))
        with db.with_write_tx() as conn:
            for p in self.projects:
                for t in range(self.topics_per_project):
                    centroid = self._unit(self.rng.normal(size=self.dims))
                    self.centroids[(p, t)] = centroid
                    for j in range(self.memories_per_topic):
                        draft = MemoryDraft(
                            content=f"{p} topic{t} note {j}: detail {self.rng.integers(1_000_000)}",
                            importance=float(self.rng.uniform(0.2, 0.9)), project=p, created_at=created,
                        )
                        mid, _ = mem_store.insert_memory(conn, draft, embedding_model=MODEL)
                        vec = self._unit(centroid + 0.9 * self._unit(self.rng.normal(size=self.dims)))
                        vectors.upsert_embedding(conn, mem_store.content_hash(conn, mid), MODEL, vec)
                        self.memory_ids.append(mid)
                        self.memory_topic[mid] = (p, t)
                        self.vectors[mid] = vec

    def session_plan(self, index: int) -> dict:
        """Project, time and needed topic for session `index` (deterministic given the seed)."""
        day, slot = divmod(index, 3)
        hour = (9, 14, 20)[slot]
        at = self.start + timedelta(days=day, hours=hour - self.start.hour)
        project = self.projects[slot % len(self.projects)]
        topic = (day // 7 + slot) % self.topics_per_project  # topics drift week by week
        return {"key": f"sess-{self.seed}-{index:05d}", "at": at, "project": project, "topic": topic}

    def context_vector(self, plan: dict) -> np.ndarray:
        return self._unit(self.centroids[(plan["project"], plan["topic"])] + 1.2 * self._unit(self.rng.normal(size=self.dims)))

    def candidates_for(self, plan: dict) -> list[str]:
        own = [m for m in self.memory_ids if self.memory_topic[m][0] == plan["project"]]
        others = [m for m in self.memory_ids if self.memory_topic[m][0] != plan["project"]]
        n_own = min(len(own), self.candidates * 2 // 3)
        picked = list(self.rng.choice(own, n_own, replace=False))
        picked += list(self.rng.choice(others, min(len(others), self.candidates - n_own), replace=False))
        return [str(m) for m in picked]

    def needed(self, plan: dict, memory_id: str) -> bool:
        return self.memory_topic[memory_id] == (plan["project"], plan["topic"])

    def record_session(self, db: StoreDatabase, index: int, *, predictor_scores: dict[str, float] | None = None,
                       candidates: list[str] | None = None, confidence: float = 0.85,
                       agent_feedback: bool = True, context_vector: np.ndarray | None = None,
                       corrupt: bool = False, key_suffix: str = "", shift_days: float = 0.0) -> dict:
        """Write one finished session: candidates (both rankings), injection, feedback, score.
        `corrupt` inverts every signal (a broken judge); `key_suffix` replays a plan as a new
        session, `shift_days` later (so the replay does not rewrite the history before the original)."""
        plan = self.session_plan(index)
        plan["key"] += key_suffix
        plan["at"] += timedelta(days=shift_days)
        ids = list(candidates) if candidates is not None else self.candidates_for(plan)
        conn = db.reader()
        importance = mem_store.importance_by_id(conn, ids)
        baseline = sorted(ids, key=lambda m: (-importance[m], m))
        predicted = sorted(predictor_scores, key=lambda m: (-predictor_scores[m], m)) if predictor_scores else None
        injected = set(baseline[:self.top_k])
        at = to_iso(plan["at"])
        rows: list[sess_store.CandidateRecord] = []
        for rank, m in enumerate(baseline, 1):
            rows.append({
                "memory_id": m, "source": "effective", "effective_score": importance[m],
                "predictor_score": predictor_scores.get(m) if predictor_scores else None,
                "baseline_rank": rank, "predictor_rank": predicted.index(m) + 1 if predicted and m in predicted else None,
                "final_score": 1.0 / (12 + rank), "rank": rank, "was_injected": m in injected,
            })
        need = {m: self.needed(plan, m) != corrupt for m in ids}  # corrupt: every signal inverted
        used = [m for m in injected if need[m]]
        continuity = len(used) / max(1, len(injected))
        relevance = {m: float(np.clip((0.9 if need[m] else 0.1) + 0.05 * self.rng.normal(), 0, 1)) for m in injected}
        fts = [m for m in ids if need[m] and self.rng.random() < 0.5]
        ctx = context_vector if context_vector is not None else self.context_vector(plan)
        with db.with_write_tx() as wconn:
            sess_store.create_session(wconn, plan["key"], harness="synthetic", project=plan["project"], cwd=None,
                                      context=f"working on {plan['project']} topic{plan['topic']}", started_at=at)
            sess_store.insert_candidates(wconn, plan["key"], rows, at)
            pred_store.upsert_session_context(
                wconn, plan["key"], project=plan["project"], context_text=None, embedding=ctx.tobytes(),
                embedding_dims=self.dims, alpha=1.0, model_version=None, scored=predictor_scores is not None,
                latency_ms=None)
            sess_store.increment_fts_hits(wconn, plan["key"], fts)
            sess_store.increment_fts_hits(wconn, plan["key"], [m for m in fts if self.rng.random() < 0.5])
            if agent_feedback:
                sess_store.apply_feedback(wconn, plan["key"], {m: (0.9 if need[m] else 0.0) for m in injected})
            sess_store.set_relevance_scores(wconn, plan["key"], relevance)
            sess_store.end_session(wconn, plan["key"], to_iso(plan["at"] + timedelta(hours=1)))
            sess_store.upsert_session_score(wconn, plan["key"], {
                "project": plan["project"], "score": continuity, "confidence": confidence,
                "memories_recalled": len(injected), "memories_used": len(used), "novel_context_count": 0,
                "missing_topics": [], "reasoning": "synthetic judge", "judge": "synthetic"}, at)
        return {**plan, "candidates": ids, "baseline": baseline, "injected": sorted(injected),
                "needed": [m for m in ids if need[m]], "context_vector": ctx}
