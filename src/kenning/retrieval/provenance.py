"""Provenance stage: a derived memory and its sources take one slot; amended rules come after their amendment.

After fusion (and session context), over the top `TOP` hits:
1. Amendments first: a hit whose memory holds a rule that later decisions amended
   (`metadata.amended_by`, set at session end) hands its place to its amendments and comes right
   after them (an amendment amended in turn: the live end of its `superseded_by` chain): each
   amendment joins the hits when no leg found it (if the filters allow it) and
   scores at least what the stale hit scored; the stale hit then scores `STALE_FACTOR` of the
   weakest of them. So the stale chat never comes alone or first, and stays next to the rule
   that replaced it (a chat that agreed with the amended rule still shows, just after it).
2. Collapse: a hit derived from other hits (`derived_from`, e.g. a decision extracted from an
   episode) absorbs them: one slot with the best score of the group, the derived text, and the
   sources' ids in `sources` (and the legs that found any of them). Memories derived from the
   same source (two sentences extracted from one turn) share that slot too, whether or not the
   source itself was a hit: the best of them keeps the slot, the others' ids join `sources`
   (bench/retrieval_locomo.py --daemon: sibling extractions of one LoCoMo turn took separate
   slots of the top 10).
"""

from __future__ import annotations

from kenning.retrieval.fusion import FusedHit
from kenning.retrieval.legs import RecallContext
from kenning.store.memories import live_successors, provenance_rows

TOP = 100
# measured on bench/coding_memory.py (sde dev split): 0.5 pushed the chats that agreed with an
# amended rule (a conversation task's twin) out of the top 10; "right after" is what is asked
STALE_FACTOR = 0.9


def provenance(ctx: RecallContext, hits: list[FusedHit]) -> list[FusedHit]:
    if not hits:
        return hits
    head, tail = hits[:TOP], hits[TOP:]
    rows = provenance_rows(ctx.conn, [h.memory_id for h in head])
    by_id = {h.memory_id: h for h in head}
    amenders = {a for i in by_id if i in rows for a in rows[i][1]}
    if amenders:
        live = live_successors(ctx.conn, sorted(amenders))  # an amendment amended later: its successor
        allowed = set(provenance_rows(ctx.conn, sorted(set(live.values())), ctx.filters))
        rows.update(provenance_rows(ctx.conn, sorted(allowed - set(rows))))
        for hit in sorted(by_id.values(), key=lambda h: -h.score):
            later = list(dict.fromkeys(live[a] for a in rows.get(hit.memory_id, ([], []))[1] if a in live))
            later = [a for a in later if a in allowed and a != hit.memory_id]
            if not later:
                continue
            for amender in later:
                if amender not in by_id:
                    by_id[amender] = FusedHit(amender, hit.score, legs=dict(hit.legs),
                                              reasons=["amends a rule held by a hit"])
                by_id[amender].score = max(by_id[amender].score, hit.score)
            hit.score = min(hit.score, min(by_id[a].score for a in later) * STALE_FACTOR)
            hit.reasons.append(f"holds a rule amended by {', '.join(later)}")
    holder: dict[str, FusedHit] = {}  # source id -> the hit whose slot stands for it
    for hit in sorted(by_id.values(), key=lambda h: -h.score):
        if hit.memory_id not in by_id:
            continue  # absorbed already
        sources = [s for s in rows.get(hit.memory_id, ([], []))[0] if s != hit.memory_id]
        sibling = next((holder[s] for s in sources if s in holder and holder[s].memory_id in by_id), None)
        if sibling is not None:  # derived from a source another hit stands for: the same slot
            by_id.pop(hit.memory_id)
            sibling.score = max(sibling.score, hit.score)
            sibling.legs = {**hit.legs, **sibling.legs}
            sibling.sources.append(hit.memory_id)
            continue
        for source in sources:
            holder.setdefault(source, hit)
            absorbed = by_id.pop(source, None)
            if absorbed is not None:
                hit.score = max(hit.score, absorbed.score)
                hit.legs = {**absorbed.legs, **hit.legs}  # found through a source is found
                hit.sources.append(source)
    return sorted(by_id.values(), key=lambda h: (-h.score, h.memory_id)) + tail
