"""SQL used by the pipeline's controlled writes (besides store.memories): supersession and
extraction provenance. Functions take the write connection and never commit."""

from __future__ import annotations

from kenning.core.clock import now_iso
from kenning.store import memories
from kenning.store.backend import Connection


def set_extraction_model(conn: Connection, memory_id: str, model: str) -> None:
    conn.execute("UPDATE memories SET extraction_model = ? WHERE id = ?", (model, memory_id))


def supersede(conn: Connection, old_id: str, by_id: str, *, reason: str, actor: str = "pipeline-v2",
              at: str | None = None) -> None:
    """Mark `old_id` superseded by `by_id` with a validity end; the row itself is kept."""
    memories.update_memory(
        conn, old_id, {"superseded_by": by_id, "valid_until": at or now_iso()},
        actor=actor, reason=reason, event="superseded",
    )


def proposal_history(conn: Connection, memory_id: str) -> list[memories.HistoryEntry]:
    """Audit rows of pipeline proposals whose source is `memory_id`."""
    return [h for h in memories.history(conn, memory_id) if h["event"] == "pipeline_proposal"]
