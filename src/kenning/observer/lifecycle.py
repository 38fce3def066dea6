"""Memory lifecycle (memory-system-v4 section 18): decay, pruning, access-count trust.

- Half-lives per type (`observer.lifecycle.half_lives_days`; a memory's own
  `decay_half_life_days` wins). Types not listed (decision, fact, preference …) never decay;
  pinned and user-verified memories never decay.
- current confidence = confidence × 0.5 ^ (days since last access / half-life).
- The daily job soft-deletes live memories unused for `soft_delete_after_half_lives`
  half-lives (never pinned or user-verified); the retention sweep hard-deletes tombstones
  after its window (30 days), skipping pinned and user-verified ones.
- Access count as trust: every `trust_access_count` uncorrected accesses add
  `trust_confidence_step` (capped); `review_clear_access_count` clears needs_review.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TypedDict

from kenning.core.clock import parse_iso, to_iso, utcnow
from kenning.core.config_observer import LifecycleSettings
from kenning.core.types import Memory
from kenning.store import observer as store
from kenning.store.backend import StoreDatabase


def half_life(memory_type: str, own: float | None, cfg: LifecycleSettings) -> float | None:
    if own is not None and own > 0:
        return float(own)
    return cfg.half_lives_days.get(memory_type)


def current_confidence(confidence: float, memory_type: str, own_half_life: float | None, last_used: str | None,
                       cfg: LifecycleSettings, *, pinned: bool = False, verified: bool = False,
                       now: datetime | None = None) -> float:
    days_half = half_life(memory_type, own_half_life, cfg)
    if not days_half or pinned or verified or not last_used:
        return confidence
    days = max(0.0, ((now or utcnow()) - parse_iso(last_used)).total_seconds() / 86400)
    return confidence * 0.5 ** (days / days_half)


def trust_level(memory: Memory, cfg: LifecycleSettings) -> str:
    """verified (user-verified or pinned) > review (needs review) > established > trusted > new."""
    if memory.user_verified or memory.pinned:
        return "verified"
    if memory.needs_review:
        return "review"
    if memory.access_count >= cfg.review_clear_access_count:
        return "established"
    return "trusted" if memory.access_count >= cfg.trust_access_count else "new"


class LifecycleView(TypedDict):
    """A memory's lifecycle as `show` and the dashboard print it."""

    trust: str
    confidence: float
    current_confidence: float
    half_life_days: float | None
    last_used: str | None
    prunes_after: str | None


class LifecycleRun(TypedDict):
    """One pruning pass: soft-deleted count, then trust promotion's counts."""

    soft_deleted: int
    confidence_raised: int
    review_cleared: int
    ran_at: str


def describe(memory: Memory, cfg: LifecycleSettings, now: datetime | None = None) -> LifecycleView:
    """What `show` and the dashboard print about a memory's lifecycle."""
    last = memory.last_accessed_at or memory.created_at
    days_half = half_life(memory.type, memory.decay_half_life_days, cfg)
    current = current_confidence(memory.confidence, memory.type, memory.decay_half_life_days, last, cfg,
                                 pinned=memory.pinned, verified=memory.user_verified, now=now)
    prune_at = None
    if days_half and not memory.pinned and not memory.user_verified and last:
        prune_at = to_iso(parse_iso(last) + timedelta(days=days_half * cfg.soft_delete_after_half_lives))
    return {"trust": trust_level(memory, cfg), "confidence": memory.confidence,
            "current_confidence": round(current, 4), "half_life_days": days_half, "last_used": last,
            "prunes_after": prune_at}


def run(db: StoreDatabase, cfg: LifecycleSettings, *, now: datetime | None = None) -> LifecycleRun:
    """One pruning pass: soft-delete memories unused for N half-lives, then trust promotion."""
    now = now or utcnow()
    at = to_iso(now)
    types = sorted(cfg.half_lives_days)
    expired: list[str] = []
    after = 0
    reader = db.reader()
    while len(expired) < cfg.batch_limit:
        rows = store.decayable(reader, types, 1000, after_rid=after)
        if not rows:
            break
        after = rows[-1].rid
        for row in rows:
            days_half = half_life(row.type, row.decay_half_life_days, cfg)
            unused = (now - parse_iso(row.last_used)).total_seconds() / 86400
            if days_half and unused > days_half * cfg.soft_delete_after_half_lives:
                expired.append(row.id)
    expired = expired[: cfg.batch_limit]
    with db.with_write_tx() as conn:
        pruned = store.soft_delete_pruned(conn, expired, at)
        trust = store.trust_promote(conn, min_access=cfg.trust_access_count, step=cfg.trust_confidence_step,
                                    cap=cfg.trust_confidence_cap, clear_review_at=cfg.review_clear_access_count,
                                    at=at)
    return {"soft_deleted": pruned, **trust, "ran_at": at}
