"""Provenance stage: a derived memory and its sources take one slot; amended rules rank first.

After fusion (and session context), over the top `TOP` hits:
1. Amendments first: a hit whose memory holds a rule that a later decision amended
   (`metadata.amended_by`, set at session end) ranks below the amending memory: the amendment
   joins the hits when no leg found it (if the filters allow it), and the stale hit's score
   becomes at most half of the amendment's.
2. Collapse: a hit derived from other hits (`derived_from`, e.g. a decision extracted from an
   episode) absorbs them: one slot with the best score of the group, the derived text, and the
   sources' ids in `sources` (and the legs that found any of them).
"""

from __future__ import annotations

from kenning.retrieval.fusion import FusedHit
from kenning.store.memories import provenance_rows

TOP = 100
STALE_FACTOR = 0.5


def provenance(ctx, hits: list[FusedHit]) -> list[FusedHit]:
    if not hits:
        return hits
    head, tail = hits[:TOP], hits[TOP:]
    rows = provenance_rows(ctx.conn, [h.memory_id for h in head])
    by_id = {h.memory_id: h for h in head}
    amenders = {rows[i][1] for i in by_id if i in rows and rows[i][1]}
    if amenders:
        allowed = set(provenance_rows(ctx.conn, sorted(amenders), ctx.filters))
        rows.update(provenance_rows(ctx.conn, sorted(allowed - set(rows))))
        for hit in list(by_id.values()):
            amender = rows.get(hit.memory_id, ([], None))[1]
            if amender not in allowed:
                continue
            if amender not in by_id:
                by_id[amender] = FusedHit(amender, hit.score, legs=dict(hit.legs),
                                          reasons=["amends a rule held by a hit"])
            hit.score = min(hit.score, by_id[amender].score) * STALE_FACTOR
            hit.reasons.append(f"holds a rule amended by {amender}")
    for hit in sorted(by_id.values(), key=lambda h: -h.score):
        if hit.memory_id not in by_id:
            continue  # absorbed already
        for source in rows.get(hit.memory_id, ([], None))[0]:
            absorbed = by_id.pop(source, None) if source != hit.memory_id else None
            if absorbed is not None:
                hit.score = max(hit.score, absorbed.score)
                hit.legs = {**absorbed.legs, **hit.legs}  # found through a source is found
                hit.sources.append(source)
    return sorted(by_id.values(), key=lambda h: (-h.score, h.memory_id)) + tail
