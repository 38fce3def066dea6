"""Retention sweep (memory-pipeline-v2 "Retention Worker").

Strict order for referential safety, each step in its own short write transaction and
limited to `batch_limit` rows (the rest is caught by later sweeps):

1. graph links of tombstones past the window (mentions, attributes, orphaned entities and
   their relations), 2. their embeddings, 3. the tombstoned memory rows (FTS by trigger),
4. history older than `history_days`, 5. completed jobs older than `completed_jobs_days`,
6. dead jobs older than `dead_jobs_days`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from kenning.core.clock import to_iso, utcnow
from kenning.core.config_pipeline import RetentionSettings
from kenning.store import jobs as jobstore
from kenning.store import retention as ret_store
from kenning.store.backend import StoreDatabase

STEPS = ("graph_links", "embeddings", "tombstones", "history", "completed_jobs", "dead_jobs")


def _cutoff(days: float, now: datetime | None = None) -> str:
    return to_iso((now or utcnow()) - timedelta(days=days))


def sweep(db: StoreDatabase, cfg: RetentionSettings, *, now: datetime | None = None) -> dict[str, object]:
    """One retention pass with `cfg` = settings.pipeline.retention. Returns per-step counts
    in execution order, plus `more` = True when a batch limit was hit."""
    limit = cfg.batch_limit
    done: list[tuple[str, Any]] = []
    with db.with_write_tx() as conn:
        expired = ret_store.expired_tombstones(conn, _cutoff(cfg.tombstone_days, now), limit)
        done.append(("graph_links", ret_store.purge_graph_links(conn, expired)))
    with db.with_write_tx() as conn:
        done.append(("embeddings", ret_store.purge_embeddings(conn, expired)))
    with db.with_write_tx() as conn:
        done.append(("tombstones", ret_store.purge_memory_rows(conn, expired)))
    with db.with_write_tx() as conn:
        done.append(("history", ret_store.purge_history(conn, _cutoff(cfg.history_days, now), limit)))
    done.append(("completed_jobs", jobstore.purge_jobs(db, "completed", _cutoff(cfg.completed_jobs_days, now), limit)))
    done.append(("dead_jobs", jobstore.purge_jobs(db, "dead", _cutoff(cfg.dead_jobs_days, now), limit)))
    counts = {name: value for name, value in done}
    more = len(expired) >= limit or any(
        isinstance(counts[k], int) and counts[k] >= limit for k in ("history", "completed_jobs", "dead_jobs")
    )
    return {"order": [name for name, _ in done], "steps": counts, "purged_memories": counts["tombstones"],
            "more": more}
