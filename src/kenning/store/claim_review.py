"""Re-score what older extraction rules wrote (issue 22, item 5): the claim test on stored memories.

The memories kenning wrote by itself before the claim test (`kenning.core.claims`) — session-end
key facts (source `session-summary`) and pipeline-extracted facts (`pipeline-v2:extracted-fact`)
— are judged again, without their turn context (speaker unknown). Those that fail, or pass
below the confidence gate, are moved into review (`needs_review = 1`); nothing is deleted,
retyped or rewritten. Each judged memory gets `metadata.claim` (the evidence, with `rescored:
true` and, for a failure, the reason as `rule: "rescored:<reason>"`) and, when moved, a history
row (`needs_review`), so `kenning review` can show why. Pinned, user-verified, superseded,
deleted memories and those that already carry `metadata.claim` are left alone: re-running it
changes nothing. Pure (no LLM, no embedding): safe inside the migration's write transaction.
"""

from __future__ import annotations

import json
from typing import TypedDict

from kenning.core import claims
from kenning.store.backend import Connection
from kenning.store.memories import add_history

LEARNED_SOURCES = ("session-summary", "pipeline-v2:extracted-fact")
ACTOR = "claims-rescore"


class Rescored(TypedDict):
    """What a rescore pass did: judged, kept, moved to review, and why (by reason)."""

    judged: int
    kept: int
    needs_review: int
    reasons: dict[str, int]


def rescore_learned(conn: Connection, at: str, *, actor: str = ACTOR) -> Rescored:
    """Judge every live learned memory not judged yet; returns counts (judged, kept, moved to review, by reason)."""
    marks = ", ".join("?" for _ in LEARNED_SOURCES)
    rows = conn.execute(
        f"SELECT id, content, type, metadata FROM memories WHERE is_deleted = 0 AND superseded_by IS NULL"
        f" AND pinned = 0 AND user_verified = 0 AND needs_review = 0 AND type != 'episode' AND source IN ({marks})",
        LEARNED_SOURCES).fetchall()
    judged, moved = 0, 0
    reasons: dict[str, int] = {}
    for memory_id, content, memory_type, raw_meta in rows:
        try:
            metadata = json.loads(raw_meta or "{}")
        except ValueError:
            metadata = {}
        if not isinstance(metadata, dict) or claims.EVIDENCE_KEY in metadata:
            continue
        verdict = claims.rescore(content, memory_type)
        judged += 1
        evidence: dict[str, object]
        if verdict.kept and verdict.evidence is not None:  # a kept claim carries its evidence
            evidence = {**verdict.evidence.to_dict(), "rescored": True}
        else:
            evidence = {"rule": f"rescored:{verdict.reason}", "speaker": "unknown", "accepted": None, "repetition": 1,
                        "confidence": 0.0, "cues": [], "antecedent": None, "ruleset": claims.RULESET, "rescored": True}
        review = not verdict.kept or verdict.needs_review
        conn.execute("UPDATE memories SET metadata = ?, needs_review = ?, updated_at = ? WHERE id = ?",
                     (json.dumps({**metadata, claims.EVIDENCE_KEY: evidence}), int(review), at, memory_id))
        if review:
            moved += 1
            reason = verdict.reason if not verdict.kept else "below the confidence gate"
            reasons[reason] = reasons.get(reason, 0) + 1
            add_history(conn, memory_id, "needs_review", changes={"needs_review": True, "claim": evidence},
                        actor=actor, reason=f"claim test ({claims.RULESET}): {reason}", at=at)
    return {"judged": judged, "kept": judged - moved, "needs_review": moved, "reasons": reasons}
