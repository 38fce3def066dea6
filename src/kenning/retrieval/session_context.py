"""Session context: a memory recorded next to a strong hit, in the same session, shares its relevance.

What an agent records in one session comes in runs (a question and its answer, an error and its
fix), and a query often matches one side of the run while the other side holds what is needed.
After fusion, each of the top `top` hits lends `weight * decay**(d-1) * its score` to the memories
d = 1..`window` places before and after it in its session (recording order, filters applied);
neighbours that no leg found join the candidates. LoCoMo protocol A, R@10: hybrid 64.5 → 71.5 with
weight 0.4, window 3, decay 0.7 (chosen leave-one-conversation-out; the same pick in all 7 folds).

Episodes (the transcript stored at session end, type `episode`) neither lend nor borrow
(`store.memories.session_neighbours` leaves them out): a chat's exchanges all restate its
subject, so lending among them let a whole chat fill the top 10 and outrank the memories it
restates (and the commits a later bug report needs) — the raw copy is a fallback, not a voice.
"""

from __future__ import annotations

from kenning.retrieval.extras_config import SessionContextParams
from kenning.retrieval.fusion import FusedHit
from kenning.retrieval.legs import RecallContext
from kenning.store.memories import session_neighbours


def session_context(ctx: RecallContext, hits: list[FusedHit], p: SessionContextParams) -> list[FusedHit]:
    if p.weight <= 0 or p.window <= 0 or not hits:
        return hits
    top = hits[: p.top]
    neighbours = session_neighbours(ctx.conn, [h.memory_id for h in top], p.window, ctx.filters)
    by_id = {h.memory_id: h for h in hits}
    lent: dict[str, float] = {}
    for hit in top:
        for neighbour_id, distance in neighbours.get(hit.memory_id, ()):
            lent[neighbour_id] = lent.get(neighbour_id, 0.0) + p.weight * p.decay ** (distance - 1) * hit.score
    for memory_id, extra in lent.items():
        fused = by_id.get(memory_id)
        if fused is None:
            fused = by_id[memory_id] = FusedHit(memory_id, 0.0)
        fused.score += extra
        fused.legs["context"] = {"score": round(extra, 6)}
        fused.reasons.append("recorded next to a strong hit in the same session")
    return sorted(by_id.values(), key=lambda h: (-h.score, h.memory_id))
