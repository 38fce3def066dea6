"""The first prompt's injection pool ranked by the predictor, with the prompt as context (issue 11).

Session start ranks a pool whose context rarely names the task; the first prompt usually does.
So the first prompt's pool (its recall hits plus what session start showed) is scored by the
predictor with the prompt as the context and fused with the recall order (the baseline here)
exactly as session start fuses: `predictor.score` → `predictor.fuse`. The ranking is returned
for the prompt handler to inject from, and as rows for `store.predictor.record_pool` (phase
'prompt:1'), so training learns from it like from session start. The predictor's own order
(`predictor_rank`) is its scores' order; the interleaving drafts from `fusion.own_order`, where
a memory the model has not seen keeps recall's place (`PoolRanking.draft_order`). The score is taken as of the
session's start (`timestamp` = started_at), so the history features match training.
No predictor, a cold one, or a cut budget: None, and the recall order stands.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from kenning.core.telemetry import record_error
from kenning.core.types import Memory
from kenning.predictor.context import Candidate, ScoringContext
from kenning.predictor.fusion import own_order, unseen_of
from kenning.predictor.interleave import team_draft
from kenning.sessions.context import Deadline, SessionDeps, run_bounded
from kenning.store.predictor import PoolRow
from kenning.store.sessions import SessionRow
from kenning.store.vectors import get_embeddings

PHASE = "prompt:1"
RESERVE_MS = 40.0


@dataclass
class PoolRanking:
    order: list[str]  # memory ids, best first (fused)
    rows: list[PoolRow] = field(default_factory=list)  # for store.predictor.record_pool
    draft_order: list[str] | None = None  # the predictor's order in the draft (fusion.own_order); None: predictor_order

    @property
    def predictor_order(self) -> list[str]:
        """The predictor's own order of the pool (its ranks, not the fused ones)."""
        return [r["memory_id"] for r in sorted((r for r in self.rows if r["predictor_rank"] is not None),
                                               key=lambda r: r["predictor_rank"] or 0)]


def interleave_pool(baseline: list[str], ranking: PoolRanking, slots: int,
                    session_key: str) -> tuple[list[str], dict[str, str]]:
    """Team-draft interleaving of the prompt's pool (issue 32): `baseline` (recall's order of what the
    prompt may show: past the prompt bar) against the predictor's order of the same ids, `slots`
    picks. (The pool in the drafted order, then the rest in the baseline's; memory id → team.) The
    predictor never adds a memory the baseline could not show: both draw from `baseline`'s ids."""
    allowed = set(baseline)
    own = ranking.draft_order if ranking.draft_order is not None else ranking.predictor_order
    picks = team_draft(baseline, [m for m in own if m in allowed], slots,
                       random.Random(f"interleave:{session_key}:{PHASE}"))
    drafted = [p.memory_id for p in picks]
    return drafted + [m for m in baseline if m not in set(drafted)], {p.memory_id: p.team for p in picks}


def rank_prompt_pool(deps: SessionDeps, session: SessionRow, prompt: str, memories: list[Memory],
                     deadline: Deadline, phase: str = PHASE) -> PoolRanking | None:
    """Rank `memories` (Memory objects in the baseline order: recall's) for this prompt."""
    predictor = deps.predictor
    if predictor is None or not memories:
        return None
    try:
        vectors = get_embeddings(deps.db.reader(), list({m.content_hash for m in memories}), deps.embedder.model_id)
        context = ScoringContext(
            session_key=session["session_key"], phase=phase, project=session.get("project"),
            embedding=run_bounded(deadline, "prompt-context", lambda: deps.embedder.embed_query(prompt),
                                  reserve_ms=RESERVE_MS),
            text=prompt, timestamp=session.get("started_at"),
        )
        candidates = [Candidate.of(m, vectors.get(m.content_hash)) for m in memories]
        scores = run_bounded(deadline, "predictor-prompt", lambda: predictor.score(context, candidates),
                             reserve_ms=RESERVE_MS / 2)
        if not scores:
            return None
        baseline = [m.id for m in memories]
        fused = predictor.fuse(baseline, scores, top_k=None)
    except Exception as exc:  # a failing predictor must never cost the prompt its answer
        record_error("sessions", f"predictor failed on the first prompt, recall order used: {exc}",
                     session_key=session.get("session_key"))
        return None
    order = [row.memory_id for row in fused if row.memory_id in scores or row.memory_id in baseline]
    order += [m for m in baseline if m not in order]
    by_score = sorted(scores, key=lambda m: (-float(scores[m]), m))
    p_rank = {m: i for i, m in enumerate(by_score, 1)}
    rows: list[PoolRow] = [{"memory_id": m, "baseline_rank": baseline.index(m) + 1 if m in baseline else None,
             "predictor_rank": p_rank.get(m), "predictor_score": scores.get(m), "final_rank": i}
            for i, m in enumerate(order, 1)]
    return PoolRanking(order=order, rows=rows, draft_order=own_order(scores, baseline, unseen_of(scores)))
