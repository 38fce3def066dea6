"""All SQL of the observer: scratchpad checkpoints, signal summaries, the cross-session index,
the step decider's indexed lookup, reinforcement and the lifecycle (pruning, trust, A/B)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypedDict

from kenning.store.memories import add_history, get_memory, row_to_memory
from kenning.core.secrets import protect_value, redact
from kenning.core.types import Memory
from kenning.store.backend import Connection


class SessionOutcome(TypedDict, total=False):
    """What promotion records of a finished session (save_session; counts default to 0)."""

    project: str | None
    session_type: str | None
    ab_group: str
    steps: int
    tool_calls: int
    file_rereads: int
    step_injections: int
    signals: int
    promoted: list[str]
    reinforced: list[str]


class SignalRecord(TypedDict, total=False):
    """One signal as add_signals stores it (observer.signals.Signal's fields)."""

    signal_class: str
    key: str
    files: list[str]
    detail: dict[str, object]
    step: int
    contaminated: bool


@dataclass(frozen=True, slots=True)
class ObservedSession:
    """A finished session's outcome summary (observer_sessions)."""

    session_key: str
    project: str | None
    session_type: str | None
    ab_group: str
    steps: int
    tool_calls: int
    file_rereads: int
    step_injections: int
    signals: int
    promoted: list[str]
    reinforced: list[str]
    finished_at: str | None
    created_at: str


@dataclass(frozen=True, slots=True)
class SessionSignal:
    """One signal of a session's summary (observer_signals)."""

    signal_class: str
    key: str
    files: list[str]
    detail: object  # the signal's JSON detail, secrets redacted
    step: int
    contaminated: bool


@dataclass(frozen=True, slots=True)
class CoEditEdge:
    """Two files edited in the same sessions, with each file's own edit-session count."""

    file_a: str
    file_b: str
    edit_sessions: int
    a_sessions: int
    b_sessions: int


@dataclass(frozen=True, slots=True)
class StepInjection:
    """A memory the step decider injected during a session."""

    memory_id: str
    injected_at: str | None
    final_score: float | None
    type: str | None
    content: str | None


@dataclass(frozen=True, slots=True)
class Decayable:
    """A memory the lifecycle may prune: its type, half-life and last use."""

    rid: int
    id: str
    type: str
    confidence: float
    decay_half_life_days: float | None
    last_used: str


@dataclass(frozen=True, slots=True)
class AbGroupMetrics:
    """Per A/B group averages over finished sessions."""

    ab_group: str
    sessions: int
    tool_calls_per_session: float | None
    file_rereads_per_session: float | None
    step_injections_per_session: float | None
    signals_per_session: float | None


def _marks(values: list[str]) -> str:
    return ",".join("?" * len(values))


def _redacted_json(value: object) -> str:
    """JSON of a scratchpad state or a signal detail with every string through the secret scanner
    (commands, tool output and error text are what the agent's tools wrote)."""
    if isinstance(value, str):
        text = value
        try:
            value = json.loads(text)
        except ValueError:
            return json.dumps(redact(text))
    return json.dumps(protect_value(value, "redact"), default=str)


# -- scratchpad checkpoints ----------------------------------------------------------------------
def save_scratchpads(conn: Connection, rows: Iterable[tuple[str, str | None, dict[str, object] | str, int]],
                     at: str) -> int:
    """Upsert checkpoints; a state is a dict or its JSON text (snapshotted by the caller)."""
    data = [(key, project, _redacted_json(state), step, at) for key, project, state, step in rows]
    conn.executemany(
        "INSERT INTO observer_scratchpads(session_key, project, state, step, updated_at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT(session_key) DO UPDATE SET project = excluded.project, state = excluded.state,"
        " step = excluded.step, updated_at = excluded.updated_at",
        data,
    )
    return len(data)


def load_scratchpads(conn: Connection, *, since: str, limit: int) -> list[tuple[str, dict[str, object]]]:
    rows = conn.execute(
        "SELECT session_key, state FROM observer_scratchpads WHERE updated_at >= ? ORDER BY updated_at DESC LIMIT ?",
        (since, limit),
    ).fetchall()
    return [(r["session_key"], json.loads(r["state"])) for r in rows]


def get_scratchpad(conn: Connection, session_key: str) -> dict[str, object] | None:
    row = conn.execute("SELECT state FROM observer_scratchpads WHERE session_key = ?", (session_key,)).fetchone()
    return json.loads(row["state"]) if row else None


def delete_scratchpad(conn: Connection, session_key: str) -> None:
    conn.execute("DELETE FROM observer_scratchpads WHERE session_key = ?", (session_key,))


# -- per-session outcome and signal summaries -----------------------------------------------------
def save_session(conn: Connection, session_key: str, row: SessionOutcome, at: str) -> None:
    conn.execute(
        "INSERT INTO observer_sessions(session_key, project, session_type, ab_group, steps, tool_calls, file_rereads,"
        " step_injections, signals, promoted, reinforced, finished_at, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(session_key) DO UPDATE SET"
        " project = excluded.project, session_type = excluded.session_type, ab_group = excluded.ab_group,"
        " steps = excluded.steps, tool_calls = excluded.tool_calls, file_rereads = excluded.file_rereads,"
        " step_injections = excluded.step_injections, signals = excluded.signals, promoted = excluded.promoted,"
        " reinforced = excluded.reinforced, finished_at = excluded.finished_at",
        (session_key, row.get("project"), row.get("session_type"), row.get("ab_group", "full"), row.get("steps", 0),
         row.get("tool_calls", 0), row.get("file_rereads", 0), row.get("step_injections", 0), row.get("signals", 0),
         json.dumps(row.get("promoted", [])), json.dumps(row.get("reinforced", [])), at, at),
    )


def get_session(conn: Connection, session_key: str) -> ObservedSession | None:
    row = conn.execute(
        "SELECT session_key, project, session_type, ab_group, steps, tool_calls, file_rereads, step_injections,"
        " signals, promoted, reinforced, finished_at, created_at FROM observer_sessions WHERE session_key = ?",
        (session_key,),
    ).fetchone()
    if row is None:
        return None
    return ObservedSession(
        row["session_key"], row["project"], row["session_type"], row["ab_group"], row["steps"], row["tool_calls"],
        row["file_rereads"], row["step_injections"], row["signals"], json.loads(row["promoted"]),
        json.loads(row["reinforced"]), row["finished_at"], row["created_at"],
    )


def add_signals(conn: Connection, session_key: str, project: str | None, signals: list[SignalRecord], at: str) -> int:
    conn.execute("DELETE FROM observer_signals WHERE session_key = ?", (session_key,))
    conn.executemany(
        "INSERT INTO observer_signals(session_key, project, signal_class, key, files, detail, step, contaminated,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(session_key, project, s["signal_class"], redact(s["key"][:500]), json.dumps(s["files"]), _redacted_json(s["detail"]),
          int(s.get("step", 0)), int(bool(s.get("contaminated"))), at) for s in signals],
    )
    return len(signals)


def session_signals(conn: Connection, session_key: str) -> list[SessionSignal]:
    rows = conn.execute(
        "SELECT signal_class, key, files, detail, step, contaminated FROM observer_signals WHERE session_key = ?"
        " ORDER BY id", (session_key,),
    ).fetchall()
    return [SessionSignal(r["signal_class"], r["key"], json.loads(r["files"]), json.loads(r["detail"]), r["step"],
                          bool(r["contaminated"])) for r in rows]


def supporting_sessions(conn: Connection, project: str | None, signal_class: str, key: str, limit: int = 50) -> list[str]:
    """Distinct sessions whose signal summary holds (class, key) in this project, oldest first."""
    return [r[0] for r in conn.execute(
        "SELECT session_key FROM observer_signals WHERE project IS ? AND signal_class = ? AND key = ?"
        " GROUP BY session_key ORDER BY MIN(id) LIMIT ?", (project, signal_class, key[:500], limit),
    )]


# -- incremental cross-session index (v4 section 12, mode 1) ---------------------------------------
def bump_file_nodes(conn: Connection, project: str | None, files: dict[str, bool], at: str) -> None:
    conn.executemany(
        "INSERT INTO observer_file_nodes(project, path, sessions, edit_sessions, updated_at) VALUES (?, ?, 1, ?, ?)"
        " ON CONFLICT(project, path) DO UPDATE SET sessions = sessions + 1,"
        " edit_sessions = edit_sessions + excluded.edit_sessions, updated_at = excluded.updated_at",
        [(project or "", path, int(edited), at) for path, edited in files.items()],
    )


def bump_edges(conn: Connection, project: str | None, pairs: list[tuple[str, str]], at: str) -> None:
    conn.executemany(
        "INSERT INTO observer_co_access_edges(project, file_a, file_b, sessions, edit_sessions, updated_at)"
        " VALUES (?, ?, ?, 1, 1, ?) ON CONFLICT(project, file_a, file_b) DO UPDATE SET sessions = sessions + 1,"
        " edit_sessions = edit_sessions + 1, updated_at = excluded.updated_at",
        [(project or "", a, b, at) for a, b in pairs],
    )


def strong_edges(conn: Connection, project: str | None, min_sessions: int, min_ratio: float,
                 limit: int = 20) -> list[CoEditEdge]:
    """Co-edit edges seen in ≥ min_sessions where the pair is ≥ min_ratio of each file's edit sessions."""
    rows = conn.execute(
        "SELECT e.file_a, e.file_b, e.edit_sessions, a.edit_sessions AS a_sessions, b.edit_sessions AS b_sessions"
        " FROM observer_co_access_edges e"
        " JOIN observer_file_nodes a ON a.project = e.project AND a.path = e.file_a"
        " JOIN observer_file_nodes b ON b.project = e.project AND b.path = e.file_b"
        " WHERE e.project = ? AND e.edit_sessions >= ?"
        " AND e.edit_sessions >= ? * MAX(a.edit_sessions, b.edit_sessions)"
        " ORDER BY e.edit_sessions DESC LIMIT ?",
        (project or "", min_sessions, min_ratio, limit),
    ).fetchall()
    return [CoEditEdge(r["file_a"], r["file_b"], r["edit_sessions"], r["a_sessions"], r["b_sessions"]) for r in rows]


def finished_sessions(conn: Connection, project: str | None) -> int:
    return int(conn.execute(
        "SELECT COUNT(*) FROM observer_sessions WHERE project IS ? AND finished_at IS NOT NULL", (project,)
    ).fetchone()[0])


def synthesis_done(conn: Connection, project: str | None, threshold: int) -> bool:
    return conn.execute(
        "SELECT 1 FROM observer_synthesis_log WHERE project = ? AND threshold = ?", (project or "", threshold)
    ).fetchone() is not None


def log_synthesis(conn: Connection, project: str | None, threshold: int, memory_ids: list[str], at: str) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO observer_synthesis_log(project, threshold, memories, created_at) VALUES (?, ?, ?, ?)",
        (project or "", threshold, json.dumps(memory_ids), at),
    )


# -- lookups for promotion and the step decider ------------------------------------------------------
def memory_for_key(conn: Connection, key: str, project: str | None) -> str | None:
    """A live memory indexed under this exact observer key (identity for reinforcement)."""
    row = conn.execute(
        "SELECT m.id FROM memory_lookup l JOIN memories m ON m.id = l.memory_id"
        " WHERE l.key = ? AND m.is_deleted = 0 AND (m.project IS ? OR m.project IS NULL) LIMIT 1",
        (key, project),
    ).fetchone()
    return row[0] if row else None


def live_ids_for_hashes(conn: Connection, hashes: list[str], project: str | None) -> dict[str, str]:
    if not hashes:
        return {}
    rows = conn.execute(
        f"SELECT content_hash, id FROM memories WHERE content_hash IN ({_marks(hashes)}) AND is_deleted = 0"
        " AND (project IS ? OR project IS NULL)", [*hashes, project],
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def step_lookup(conn: Connection, keys: list[tuple[str, tuple[str, ...] | None]], *, project: str | None, session_key: str,
                exclude: list[str], min_confidence: float, limit: int) -> list[tuple[str, Memory]]:
    """Live memories indexed under the given keys (in priority order; types None = any type), not yet
    injected in this session, at least `min_confidence`: [(key, memory)] best key first."""
    out: list[tuple[str, Memory]] = []
    seen = set(exclude)
    for key, types in keys:
        type_sql = f" AND m.type IN ({_marks(list(types))})" if types else ""
        rows = conn.execute(
            "SELECT m.* FROM memory_lookup l JOIN memories m ON m.id = l.memory_id"
            " WHERE l.key = ? AND m.is_deleted = 0 AND m.superseded_by IS NULL AND m.confidence >= ?"
            " AND (m.project IS ? OR m.project IS NULL)" + type_sql +
            " AND NOT EXISTS (SELECT 1 FROM session_memories sm WHERE sm.session_key = ? AND sm.memory_id = m.id"
            " AND sm.was_injected = 1) ORDER BY m.confidence DESC, m.importance DESC LIMIT ?",
            [key, min_confidence, project, *(types or ()), session_key, limit],
        ).fetchall()
        for row in rows:
            if row["id"] not in seen:
                seen.add(row["id"])
                out.append((key, row_to_memory(row)))
        if len(out) >= limit:
            break
    return out[:limit]


def record_step_injection(conn: Connection, session_key: str, memories: list[tuple[str, float]], at: str) -> None:
    """session_memories rows (phase 'step', injected) and one access each for the shown memories."""
    rank = int(conn.execute("SELECT COALESCE(MAX(rank), 0) FROM session_memories WHERE session_key = ?",
                            (session_key,)).fetchone()[0])
    for offset, (memory_id, score) in enumerate(memories, start=1):
        conn.execute(
            "INSERT INTO session_memories(id, session_key, memory_id, source, prefilter_source, final_score, rank,"
            " was_injected, injected_at, inject_phase, created_at) VALUES (lower(hex(randomblob(8))), ?, ?,"
            " 'observer-step', 'observer', ?, ?, 1, ?, 'step', ?) ON CONFLICT(session_key, memory_id) DO UPDATE SET"
            " was_injected = 1, injected_at = COALESCE(injected_at, excluded.injected_at),"
            " inject_phase = COALESCE(inject_phase, 'step')",
            (session_key, memory_id, score, rank + offset, at, at),
        )
    conn.executemany("UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? WHERE id = ?",
                     [(at, memory_id) for memory_id, _ in memories])


def step_injections(conn: Connection, session_key: str) -> list[StepInjection]:
    rows = conn.execute(
        "SELECT sm.memory_id, sm.injected_at, sm.final_score, m.type, m.content FROM session_memories sm"
        " LEFT JOIN memories m ON m.id = sm.memory_id WHERE sm.session_key = ? AND sm.inject_phase = 'step'"
        " ORDER BY sm.injected_at, sm.rank", (session_key,),
    ).fetchall()
    return [StepInjection(r["memory_id"], r["injected_at"], r["final_score"], r["type"], r["content"]) for r in rows]


def reinforce(conn: Connection, memory_id: str, *, session_key: str, signal_class: str, step: float, cap: float, at: str) -> None:
    """A candidate matched this memory: raise its confidence, count an access, add the session."""
    memory = get_memory(conn, memory_id)
    meta = dict(memory.metadata)
    sessions = list(meta.get("supporting_sessions") or [])
    if session_key not in sessions:
        sessions = (sessions + [session_key])[-50:]
    meta["supporting_sessions"] = sessions
    meta["reinforced"] = int(meta.get("reinforced", 0)) + 1
    confidence = min(cap, max(memory.confidence, memory.confidence + step))
    conn.execute(
        "UPDATE memories SET confidence = ?, metadata = ?, access_count = access_count + 1, last_accessed_at = ?,"
        " updated_at = ? WHERE id = ?",
        (confidence, json.dumps(meta, default=str), at, at, memory_id),
    )
    add_history(conn, memory_id, "reinforced", changes={"confidence": [memory.confidence, confidence],
                                                        "signal_class": signal_class, "session_key": session_key},
                actor="observer", reason="observed again", at=at)


# -- lifecycle (v4 section 18) -----------------------------------------------------------------------
def decayable(conn: Connection, types: list[str], limit: int, after_rid: int = 0) -> list[Decayable]:
    """Live, unpinned, unverified memories of decaying types: rid, id, type, confidence, half-life, last use."""
    if not types:
        return []
    rows = conn.execute(
        "SELECT rid, id, type, confidence, decay_half_life_days, COALESCE(last_accessed_at, created_at) AS last_used"
        f" FROM memories WHERE is_deleted = 0 AND pinned = 0 AND user_verified = 0 AND type IN ({_marks(types)})"
        " AND rid > ? ORDER BY rid LIMIT ?", [*types, after_rid, limit],
    ).fetchall()
    return [Decayable(r["rid"], r["id"], r["type"], r["confidence"], r["decay_half_life_days"], r["last_used"])
            for r in rows]


def soft_delete_pruned(conn: Connection, ids: list[str], at: str) -> int:
    if not ids:
        return 0
    count = conn.execute(
        f"UPDATE memories SET is_deleted = 1, deleted_at = ?, updated_at = ? WHERE id IN ({_marks(ids)})"
        " AND is_deleted = 0 AND pinned = 0 AND user_verified = 0", [at, at, *ids],
    ).rowcount
    for memory_id in ids:
        add_history(conn, memory_id, "deleted", actor="lifecycle", reason="unused for 3 half-lives", at=at)
    return count


class TrustPromotion(TypedDict):
    """What one trust pass did: confidence raised on this many memories, review cleared on that many."""

    confidence_raised: int
    review_cleared: int


def trust_promote(conn: Connection, *, min_access: int, step: float, cap: float, clear_review_at: int,
                  at: str) -> TrustPromotion:
    """Access count as trust (v4 section 18): every `min_access` uncorrected accesses add `step` confidence
    (once per threshold crossed, tracked in metadata.trust_level); `clear_review_at` clears needs_review."""
    # The level is kept in metadata and compared here, not in SQL: PostgreSQL has no json_set, and
    # its json_extract gives text, which COALESCE(…, 0) refused ("types text and integer").
    candidates = conn.execute(
        "SELECT id, confidence, access_count, metadata FROM memories"
        " WHERE is_deleted = 0 AND access_count >= ? AND confidence < ?"
        " AND NOT EXISTS (SELECT 1 FROM memory_history h WHERE h.memory_id = memories.id AND h.event = 'updated'"
        "  AND h.actor IS NOT NULL AND h.actor NOT IN ('observer', 'lifecycle', 'pipeline'))",
        (min_access, cap),
    ).fetchall()
    updates: list[tuple[float, str, str, str]] = []
    for memory_id, confidence, access_count, metadata in candidates:
        meta = json.loads(metadata) if metadata else {}
        level = int(access_count) // min_access
        if not isinstance(meta, dict) or float(meta.get("trust_level") or 0) >= level:
            continue
        meta["trust_level"] = level
        updates.append((min(cap, float(confidence) + step), json.dumps(meta), at, memory_id))
    if updates:
        conn.executemany("UPDATE memories SET confidence = ?, metadata = ?, updated_at = ? WHERE id = ?", updates)
    raised = len(updates)
    cleared = conn.execute(
        "UPDATE memories SET needs_review = 0, updated_at = ? WHERE is_deleted = 0 AND needs_review = 1"
        " AND access_count >= ?", (at, clear_review_at),
    ).rowcount
    return {"confidence_raised": raised, "review_cleared": cleared}


# -- A/B metrics (v4 section 19) ---------------------------------------------------------------------
def ab_metrics(conn: Connection) -> list[AbGroupMetrics]:
    rows = conn.execute(
        "SELECT ab_group, COUNT(*) AS sessions, AVG(tool_calls) AS tool_calls_per_session,"
        " AVG(file_rereads) AS file_rereads_per_session, AVG(step_injections) AS step_injections_per_session,"
        " AVG(signals) AS signals_per_session FROM observer_sessions WHERE finished_at IS NOT NULL GROUP BY ab_group"
    ).fetchall()
    return [AbGroupMetrics(r["ab_group"], r["sessions"], r["tool_calls_per_session"], r["file_rereads_per_session"],
                           r["step_injections_per_session"], r["signals_per_session"]) for r in rows]


def files_seen_before(conn: Connection, project: str | None, paths: list[str]) -> int:
    """How many of these files earlier sessions of the project already accessed (v4 'file re-reads')."""
    if not paths:
        return 0
    return int(conn.execute(
        f"SELECT COUNT(*) FROM observer_file_nodes WHERE project = ? AND path IN ({_marks(paths)})",
        [project or "", *paths],
    ).fetchone()[0])


def flag_for_review(conn: Connection, ids: list[str], at: str) -> None:
    """Observer memories derived after an external fetch are held for review (trust gate)."""
    if ids:
        conn.execute(f"UPDATE memories SET needs_review = 1, updated_at = ? WHERE id IN ({_marks(ids)})", [at, *ids])
