"""All SQL of the predictive memory scorer.

Reads come in two kinds: training data (session_scores + sessions + session_memories +
memories + embeddings), used by the read-only sidecar, and audit data (comparisons,
training log, drift), used by the daemon's API. Writes (state, comparisons, training log,
session context, canary, calibration, drift signals) are daemon-only: call them inside
`db.with_write_tx()`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict, cast

from kenning.core.clock import normalize_iso, now_iso
from kenning.core.secrets import redact
from kenning.store.backend import Connection, Row, inserted_id

# -- rows -------------------------------------------------------------------------
# Training rows stay dicts (labels and features read them by column name, and tests build them
# by hand): TypedDicts name their columns. Small read rows are frozen dataclasses.


class ScoredSession(TypedDict):
    """A scored session as training reads it (_SESSION_SELECT)."""

    session_key: str
    project: str | None
    score: float
    confidence: float
    memories_used: int
    novel_context_count: int
    judge: str | None
    started_at: str | None
    scored_at: str
    session_context_text: str | None
    training_confidence: float | None


class CandidateRow(TypedDict):
    """One recorded session-start candidate joined with its memory and stored embedding."""

    memory_id: str
    source: str | None
    effective_score: float | None
    predictor_score: float | None
    baseline_rank: int | None
    predictor_rank: int | None
    final_score: float | None
    rank: int | None
    was_injected: int
    relevance_score: float | None
    fts_hit_count: int
    agent_relevance_score: float | None
    agent_feedback_count: int
    created_at: str
    team: str | None  # interleaving: the ranking that contributed this injected pick
    content: str | None
    importance: float | None
    access_count: int | None
    memory_created_at: str | None
    memory_updated_at: str | None
    last_accessed_at: str | None
    superseded_by: str | None
    is_deleted: int | None
    deleted_at: str | None
    memory_project: str | None
    vector: bytes | memoryview | None  # memoryview: a view of the vectors a fit kept (store.training_reads)
    dims: int | None
    touched: NotRequired[str | None]  # predictor.labels: why the transcript touched it (None: it did not)


class SignalEvent(TypedDict):
    """A candidate row that carries a signal (agent rating, FTS hit, touched)."""

    session_key: str
    memory_id: str
    started_at: str
    agent: float | None
    ratings: int
    fts: int
    touched: int


class TimelineSession(TypedDict):
    session_key: str
    project: str | None
    started_at: str
    ended: NotRequired[int]  # 1 once the session ended (session_timeline's rows carry it)


class SessionContextRow(TypedDict):
    """What was scored for one pool (predictor_session_context)."""

    session_key: str
    project: str | None
    context_text: str | None
    embedding: bytes | None
    embedding_dims: int | None
    alpha: float
    model_version: int | None
    scored: int
    latency_ms: float | None
    created_at: str


class PoolRow(TypedDict):
    """A memory of a ranked pool beyond session start, as recorded (predictor_pools)."""

    memory_id: str
    baseline_rank: int | None
    predictor_rank: int | None
    predictor_score: float | None
    final_rank: int | None


class RecordedPoolRow(PoolRow):
    session_key: str
    phase: str
    created_at: str


class SessionEvidence(TypedDict):
    """Why a session's labels may train the model (predictor_session_evidence)."""

    session_key: str
    confidence: float
    usable: bool
    parts: dict[str, object]
    created_at: str


class ComparisonRecord(TypedDict, total=False):
    """What session end records of one comparison (predictor_comparisons; id and created_at default)."""

    id: str
    session_key: str
    predictor_ndcg: float
    baseline_ndcg: float
    predictor_won: int
    margin: float
    scorer_confidence: float
    ema_updated: int
    success_rate: float
    alpha: float
    predictor_top_ids: list[str] | str
    baseline_top_ids: list[str] | str
    relevance_scores: dict[str, float] | str
    fts_overlap_score: float | None
    method: str  # 'ndcg' | 'interleave' (margin = predictor credit − baseline credit)
    interleaved_ids: list[str] | str  # the shown picks of an interleaved session, in draft order
    credit: dict[str, str] | str  # memory id → the team ('baseline' | 'predictor') that picked it
    predictor_credit: float | None
    baseline_credit: float | None
    created_at: str


class Comparison(TypedDict):
    """A recorded comparison, decoded for the API (JSON columns parsed, `winner` derived)."""

    id: str
    session_key: str
    predictor_ndcg: float
    baseline_ndcg: float
    predictor_won: bool
    margin: float
    scorer_confidence: float | None
    ema_updated: bool
    success_rate: float | None
    alpha: float | None
    predictor_top_ids: list[str]
    baseline_top_ids: list[str]
    relevance_scores: dict[str, float]
    fts_overlap_score: float | None
    method: str
    interleaved_ids: list[str]
    credit: dict[str, str]
    predictor_credit: float | None
    baseline_credit: float | None
    created_at: str
    winner: str


class _TrainingRun(TypedDict):
    """The figures of one training run (predictor_training_log's columns)."""

    model_version: int
    trigger: str
    loss: float | None
    step: int
    sample_count: int
    samples_skipped: int
    duration_ms: float
    canary_ndcg: float | None
    canary_ndcg_delta: float | None
    canary_score_variance: float | None
    canary_topk_churn: float | None
    canary_topk_overlap: float | None
    train_validation_failures: int
    drift_resets: int
    error: str | None


class TrainingLogRecord(_TrainingRun):
    """One training run as the trainer records it (JSON columns as objects or text)."""

    gates: dict[str, object] | str
    swapped: int | bool
    loss_curve: list[float] | str
    created_at: NotRequired[str]  # now, when left out


class TrainingLogRow(_TrainingRun):
    """A predictor_training_log row as stored (gates and loss curve JSON text)."""

    id: int
    gates: str
    swapped: int
    loss_curve: str
    created_at: str


class TrainingLogEntry(_TrainingRun):
    """A recorded training run, decoded for the API."""

    id: int
    gates: dict[str, object]
    swapped: bool
    loss_curve: list[float]
    created_at: str


class CalibrationLabel(TypedDict):
    session_key: str
    memory_id: str
    human_label: float
    scorer_label: float | None
    delta: float | None


@dataclass(frozen=True, slots=True)
class JudgeCalibration:
    """The continuity judge against reference labels (human and agent)."""

    labels: int
    human_labels: int
    agent_labels: int
    mae: float | None


@dataclass(frozen=True, slots=True)
class CalibrationSummary:
    """The human calibration set: labels, sessions, mean absolute error against the judge."""

    labels: int
    sessions: int
    mae: float | None


@dataclass(frozen=True, slots=True)
class AgeRelevance:
    """Average judge relevance of young (< 7 d) and old (> 30 d) memories."""

    recent_avg: float | None
    old_avg: float | None
    samples: int


@dataclass(frozen=True, slots=True)
class CanaryEntry:
    session_key: str
    confidence: float
    added_at: str


@dataclass(frozen=True, slots=True)
class DriftSignal:
    id: int
    drift_signal: float | None
    recent_avg: float | None
    old_avg: float | None
    samples: int
    created_at: str


@dataclass(frozen=True, slots=True)
class DriftReset:
    """A training run the drift reset triggered."""

    id: int
    model_version: int | None
    swapped: int
    loss: float | None
    created_at: str


# -- training data (read-only) ------------------------------------------------


def stored_embedding_models(conn: Connection) -> list[str]:
    """The models the store holds vectors of, in name order: a loose scan of m034's index (the next
    model after the last one), one probe per model whatever the number of vectors."""
    models: list[str] = []
    row = conn.execute("SELECT MIN(model) FROM embeddings").fetchone()
    while row is not None and row[0] is not None:
        models.append(row[0])
        row = conn.execute("SELECT MIN(model) FROM embeddings WHERE model > ?", (row[0],)).fetchone()
    return models


def embedding_model_in_use(conn: Connection) -> str | None:
    """The embedding model with the most stored vectors (the one the predictor reads). A store holds
    one model but while a model change re-embeds it; only then are vectors counted (per model, from
    m034's index)."""
    models = stored_embedding_models(conn)
    if len(models) < 2:
        return models[0] if models else None
    counts = {m: int(conn.execute("SELECT COUNT(*) FROM embeddings WHERE model = ?", (m,)).fetchone()[0])
              for m in models}
    return max(models, key=lambda m: counts[m])  # the first of equals: the first name, as before


def embedding_dims_in_use(conn: Connection) -> int | None:
    """The width of the vectors of `embedding_model_in_use` (None when the store holds none)."""
    model = embedding_model_in_use(conn)
    if model is None:
        return None
    row = conn.execute("SELECT MIN(dims) FROM embeddings WHERE model = ?", (model,)).fetchone()
    return int(row[0]) if row and row[0] is not None else None


_SESSION_SELECT = (
    "SELECT ss.session_key, COALESCE(ss.project, s.project) AS project, ss.score, ss.confidence,"
    " ss.memories_used, ss.novel_context_count, ss.judge,"
    " COALESCE(s.started_at, ss.created_at) AS started_at, ss.created_at AS scored_at,"
    " s.context AS session_context_text, pe.confidence AS training_confidence"
    " FROM session_scores ss LEFT JOIN sessions s ON s.session_key = ss.session_key"
    " LEFT JOIN predictor_session_evidence pe ON pe.session_key = ss.session_key"
)


def eligible_sessions(conn: Connection, min_confidence: float, limit: int) -> list[ScoredSession]:
    """Most recent scored sessions that may carry training signal, newest first.

    The judge's confidence alone no longer decides (issue 11): a session is kept when its
    recorded training confidence passes, or when none was recorded yet (labels.py decides).
    """
    rows = conn.execute(
        f"{_SESSION_SELECT} WHERE pe.session_key IS NULL OR pe.confidence >= ? ORDER BY started_at DESC LIMIT ?",
        (min_confidence, limit),
    ).fetchall()
    return [cast(ScoredSession, dict(r)) for r in rows]


def replay_sessions(conn: Connection, min_confidence: float, size: int) -> list[ScoredSession]:
    """The replay buffer: the top `size` usable historical sessions by continuity score."""
    rows = conn.execute(
        f"{_SESSION_SELECT} WHERE pe.usable = 1 AND pe.confidence >= ? ORDER BY ss.score DESC, started_at DESC LIMIT ?",
        (min_confidence, size),
    ).fetchall()
    return [cast(ScoredSession, dict(r)) for r in rows]


def sessions_by_keys(conn: Connection, keys: list[str]) -> list[ScoredSession]:
    if not keys:
        return []
    marks = ",".join("?" * len(keys))
    rows = conn.execute(f"{_SESSION_SELECT} WHERE ss.session_key IN ({marks})", keys).fetchall()
    return [cast(ScoredSession, dict(r)) for r in rows]


def session_score(conn: Connection, session_key: str) -> ScoredSession | None:
    rows = sessions_by_keys(conn, [session_key])
    return rows[0] if rows else None


def continuity_reasoning(conn: Connection, session_key: str) -> str | None:
    """The judge's continuity reasoning for a scored session (None when unscored or absent)."""
    row = conn.execute("SELECT continuity_reasoning FROM session_scores WHERE session_key = ?",
                       (session_key,)).fetchone()
    return row[0] if row else None


def session_started_at(conn: Connection, session_key: str) -> str | None:
    row = conn.execute("SELECT started_at FROM sessions WHERE session_key = ?", (session_key,)).fetchone()
    return row[0] if row else None


# Where a fit's training reads are held (store.training_reads.reading_through sets it, in the
# sidecar's training thread): (session key, model) → the session's candidate rows, or None.
CANDIDATE_ROWS: ContextVar[Callable[[str, str | None], list[CandidateRow] | None] | None] = ContextVar(
    "kenning_candidate_rows", default=None)


def session_candidate_rows(conn: Connection, session_key: str, model: str | None) -> list[CandidateRow]:
    """Every candidate recorded for a session, joined with its memory and stored embedding (from
    the fit's prepared reads when the caller reads through them: store.training_reads)."""
    held = CANDIDATE_ROWS.get()
    if held is not None and (found := held(session_key, model)) is not None:
        return found
    rows = conn.execute(
        "SELECT sm.memory_id, sm.source, sm.effective_score, sm.predictor_score, sm.baseline_rank,"
        " sm.predictor_rank, sm.final_score, sm.rank, sm.was_injected, sm.relevance_score,"
        " sm.fts_hit_count, sm.agent_relevance_score, sm.agent_feedback_count, sm.created_at, sm.team,"
        " m.content, m.importance, m.access_count, m.created_at AS memory_created_at,"
        " m.updated_at AS memory_updated_at, m.last_accessed_at, m.superseded_by, m.is_deleted,"
        " m.deleted_at, m.project AS memory_project, e.vector, e.dims"
        " FROM session_memories sm"
        " LEFT JOIN memories m ON m.id = sm.memory_id"
        " LEFT JOIN embeddings e ON e.content_hash = m.content_hash AND e.model = ?"
        " WHERE sm.session_key = ? ORDER BY sm.rank, sm.memory_id",
        (model, session_key),
    ).fetchall()
    return [cast(CandidateRow, dict(r)) for r in rows]


def previous_session_start(conn: Connection, started_at: str) -> str | None:
    """Start of the latest session before `started_at` (for the session-gap feature)."""
    row = conn.execute(
        "SELECT MAX(started_at) FROM sessions WHERE started_at < ?", (started_at,)
    ).fetchone()
    return row[0] if row and row[0] else None


def session_context(conn: Connection, session_key: str) -> SessionContextRow | None:
    row = conn.execute(
        "SELECT * FROM predictor_session_context WHERE session_key = ?", (session_key,)
    ).fetchone()
    return cast(SessionContextRow, dict(row)) if row else None


def count_scored_sessions(conn: Connection, min_confidence: float = 0.0) -> int:
    return int(conn.execute(
        "SELECT COUNT(*) FROM session_scores WHERE confidence >= ?", (min_confidence,)
    ).fetchone()[0])


def count_usable_sessions(conn: Connection) -> int:
    """Sessions whose labels can train the model (training confidence and spread passed)."""
    return int(conn.execute("SELECT COUNT(*) FROM predictor_session_evidence WHERE usable = 1").fetchone()[0])


def signal_events(conn: Connection, *, memory_ids: list[str] | None = None, session_keys: list[str] | None = None,
                  before: str | None = None, unstarted: bool = False) -> Iterator[SignalEvent]:
    """Candidate rows that carry a signal (agent rating, FTS hit, touched), with their session's start;
    one at a time. With `unstarted`, only the rows of sessions the sessions table has no start for
    (history.load_all reads the others by session, a batch at a time)."""
    clauses = ["(sm.agent_feedback_count > 0 OR sm.fts_hit_count > 0 OR pt.memory_id IS NOT NULL)"]
    params: list[Any] = []
    if unstarted:
        clauses.append("s.started_at IS NULL")
    if memory_ids is not None:
        clauses.append(f"sm.memory_id IN ({','.join('?' * len(memory_ids))})")
        params += memory_ids
    if session_keys is not None:
        clauses.append(f"sm.session_key IN ({','.join('?' * len(session_keys))})")
        params += session_keys
    if before is not None:
        clauses.append("COALESCE(s.started_at, sm.created_at) < ?")
        params.append(normalize_iso(before))
    rows = conn.execute(
        "SELECT sm.session_key, sm.memory_id, COALESCE(s.started_at, sm.created_at) AS started_at,"
        " sm.agent_relevance_score AS agent, sm.agent_feedback_count AS ratings, sm.fts_hit_count AS fts,"
        " pt.memory_id IS NOT NULL AS touched"
        " FROM session_memories sm LEFT JOIN sessions s ON s.session_key = sm.session_key"
        " LEFT JOIN predictor_touched pt ON pt.session_key = sm.session_key AND pt.memory_id = sm.memory_id"
        f" WHERE {' AND '.join(clauses)}", params,
    )
    return (cast(SignalEvent, dict(r)) for r in rows)


_ALL = object()


def session_timeline(conn: Connection, *, project: str | None | object = _ALL, before: str | None = None,
                     exclude: str | None = None, limit: int | None = None) -> list[TimelineSession]:
    """Sessions (key, project, started_at, ended), newest first; one project's when `project` is given."""
    clauses, params = ["started_at IS NOT NULL"], []
    if project is not _ALL:
        clauses.append("project IS ?")
        params.append(project)
    if before is not None:
        clauses.append("started_at < ?")
        params.append(normalize_iso(before))
    if exclude is not None:
        clauses.append("session_key != ?")
        params.append(exclude)
    sql = ("SELECT session_key, project, started_at, CASE WHEN ended_at IS NULL THEN 0 ELSE 1 END AS ended"
           f" FROM sessions WHERE {' AND '.join(clauses)} ORDER BY started_at DESC")
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [cast(TimelineSession, dict(r)) for r in conn.execute(sql, params)]


def touched_ids(conn: Connection, session_key: str) -> dict[str, str]:
    return {r[0]: r[1] for r in conn.execute(
        "SELECT memory_id, reason FROM predictor_touched WHERE session_key = ?", (session_key,))}


def memory_entity_names(conn: Connection, memory_ids: list[str]) -> dict[str, list[str]]:
    """Entity names the knowledge graph links to each memory."""
    if not memory_ids:
        return {}
    out: dict[str, list[str]] = {}
    rows = conn.execute(
        "SELECT mem.memory_id, e.name FROM memory_entity_mentions mem JOIN entities e ON e.id = mem.entity_id"
        f" WHERE mem.memory_id IN ({','.join('?' * len(memory_ids))})", memory_ids,
    )
    for memory_id, name in rows:
        out.setdefault(memory_id, []).append(name)
    return out


def judge_calibration(conn: Connection) -> JudgeCalibration:
    """The judge against reference labels: human labels (calibration table) and, where an
    independent (LLM) judge rated memories the agent also rated, the agent's scores mapped to 0..1."""
    human = conn.execute(
        "SELECT COUNT(*), AVG(ABS(delta)) FROM predictor_calibration WHERE delta IS NOT NULL").fetchone()
    agent = conn.execute(
        "SELECT COUNT(*), AVG(ABS(sm.relevance_score - (sm.agent_relevance_score + 1) / 2.0))"
        " FROM session_memories sm JOIN session_scores ss ON ss.session_key = sm.session_key"
        " WHERE ss.judge = 'llm' AND sm.relevance_score IS NOT NULL AND sm.agent_feedback_count > 0"
    ).fetchone()
    n = (human[0] or 0) + (agent[0] or 0)
    mae = None
    if n:
        mae = ((human[1] or 0.0) * (human[0] or 0) + (agent[1] or 0.0) * (agent[0] or 0)) / n
    return JudgeCalibration(labels=n, human_labels=human[0] or 0, agent_labels=agent[0] or 0, mae=mae)


def record_evidence(conn: Connection, session_key: str, *, confidence: float, usable: bool,
                    parts: dict[str, object]) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO predictor_session_evidence(session_key, confidence, usable, parts, created_at)"
        " VALUES (?, ?, ?, ?, ?)", (session_key, confidence, int(usable), json.dumps(parts, sort_keys=True), now_iso()),
    )


def record_touched(conn: Connection, session_key: str, touched: dict[str, str]) -> None:
    conn.execute("DELETE FROM predictor_touched WHERE session_key = ?", (session_key,))
    conn.executemany(
        "INSERT INTO predictor_touched(session_key, memory_id, reason) VALUES (?, ?, ?)",
        [(session_key, m, why) for m, why in touched.items()],
    )


def session_evidence(conn: Connection, session_key: str) -> SessionEvidence | None:
    row = conn.execute("SELECT * FROM predictor_session_evidence WHERE session_key = ?", (session_key,)).fetchone()
    if row is None:
        return None
    data = dict(row)
    data["parts"] = json.loads(data["parts"] or "{}")
    data["usable"] = bool(data["usable"])
    return cast(SessionEvidence, data)


def record_pool(conn: Connection, session_key: str, phase: str, rows: list[PoolRow], at: str | None = None) -> None:
    """A ranked pool beyond session start (e.g. phase 'prompt:1'): replaces any earlier record."""
    stamp = at or now_iso()
    conn.execute("DELETE FROM predictor_pools WHERE session_key = ? AND phase = ?", (session_key, phase))
    conn.executemany(
        "INSERT INTO predictor_pools(session_key, phase, memory_id, baseline_rank, predictor_rank,"
        " predictor_score, final_rank, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(session_key, phase, r["memory_id"], r.get("baseline_rank"), r.get("predictor_rank"),
          r.get("predictor_score"), r.get("final_rank"), stamp) for r in rows],
    )


def pools(conn: Connection, session_key: str) -> dict[str, list[RecordedPoolRow]]:
    """{phase: rows in final order} of the session's recorded pools beyond session start."""
    out: dict[str, list[RecordedPoolRow]] = {}
    for r in conn.execute("SELECT * FROM predictor_pools WHERE session_key = ? ORDER BY phase, final_rank,"
                          " memory_id", (session_key,)):
        out.setdefault(r["phase"], []).append(cast(RecordedPoolRow, dict(r)))
    return out


# -- canary set ------------------------------------------------------------------


def canary_rows(conn: Connection) -> list[CanaryEntry]:
    return [CanaryEntry(r["session_key"], r["confidence"], r["added_at"]) for r in conn.execute(
        "SELECT session_key, confidence, added_at FROM predictor_canary ORDER BY confidence DESC, session_key"
    )]


def canary_candidates(conn: Connection, min_confidence: float, size: int) -> list[ScoredSession]:
    """The usable sessions with the highest training confidence among the 4 x size most recent
    (ties: most recent first), so the canary follows the user instead of freezing on old work."""
    rows = conn.execute(
        f"SELECT * FROM ({_SESSION_SELECT} WHERE pe.usable = 1 AND pe.confidence >= ?"
        " ORDER BY started_at DESC LIMIT ?) ORDER BY training_confidence DESC, started_at DESC LIMIT ?",
        (min_confidence, 4 * size, size),
    ).fetchall()
    return [cast(ScoredSession, {**dict(r), "confidence": r["training_confidence"]}) for r in rows]


def canary_lag_days(conn: Connection) -> float | None:
    """Days between the newest usable session and the canary's newest session (session time)."""
    row = conn.execute(
        "SELECT julianday((SELECT MAX(COALESCE(s.started_at, pe.created_at)) FROM predictor_session_evidence pe"
        "  LEFT JOIN sessions s ON s.session_key = pe.session_key WHERE pe.usable = 1))"
        " - julianday((SELECT MAX(s.started_at) FROM predictor_canary c JOIN sessions s"
        "  ON s.session_key = c.session_key))"
    ).fetchone()
    return float(row[0]) if row and row[0] is not None else None


def replace_canary(conn: Connection, rows: list[tuple[str, float]], at: str | None = None) -> None:
    stamp = at or now_iso()
    conn.execute("DELETE FROM predictor_canary")
    conn.executemany(
        "INSERT INTO predictor_canary(session_key, confidence, added_at) VALUES (?, ?, ?)",
        [(key, conf, stamp) for key, conf in rows],
    )


# -- state and per-session context (daemon writes) ------------------------------------


def load_state(conn: Connection, key: str) -> dict[str, object] | None:
    row = conn.execute("SELECT value FROM predictor_state WHERE key = ?", (key,)).fetchone()
    return json.loads(row[0]) if row else None


def save_state(conn: Connection, key: str, value: Mapping[str, object]) -> None:
    conn.execute(
        "INSERT INTO predictor_state(key, value, updated_at) VALUES (?, ?, ?)"
        " ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        (key, json.dumps(value, sort_keys=True), now_iso()),
    )


def upsert_session_context(
    conn: Connection, session_key: str, *, project: str | None, context_text: str | None,
    embedding: bytes | None, embedding_dims: int | None, alpha: float,
    model_version: int | None, scored: bool, latency_ms: float | None,
) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO predictor_session_context(session_key, project, context_text, embedding,"
        " embedding_dims, alpha, model_version, scored, latency_ms, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (session_key, project, redact(context_text) if context_text else context_text,  # the prompt, redacted
         embedding, embedding_dims, alpha, model_version, int(scored), latency_ms, now_iso()),
    )


# -- comparisons ------------------------------------------------------------------

_COMPARISON_JSON = ("predictor_top_ids", "baseline_top_ids", "relevance_scores", "interleaved_ids", "credit")


def insert_comparison(conn: Connection, row: ComparisonRecord) -> str:
    data = dict(row)
    data.setdefault("id", uuid.uuid4().hex[:16])
    data.setdefault("created_at", now_iso())
    data.setdefault("method", "ndcg")
    data.setdefault("interleaved_ids", [])
    data.setdefault("credit", {})
    for name in _COMPARISON_JSON:
        if not isinstance(data[name], str):
            data[name] = json.dumps(data[name])
    columns = ("id", "session_key", "predictor_ndcg", "baseline_ndcg", "predictor_won", "margin",
               "scorer_confidence", "ema_updated", "success_rate", "alpha", "predictor_top_ids",
               "baseline_top_ids", "relevance_scores", "fts_overlap_score", "method", "interleaved_ids", "credit",
               "predictor_credit", "baseline_credit", "created_at")
    conn.execute(
        f"INSERT INTO predictor_comparisons({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
        [data.get(c) for c in columns],
    )
    return str(data["id"])


def _decode_comparison(row: Row) -> Comparison:
    data = dict(row)
    for name in _COMPARISON_JSON:
        data[name] = json.loads(data[name])
    data["predictor_won"] = bool(data["predictor_won"])
    data["ema_updated"] = bool(data["ema_updated"])
    data["winner"] = "tie" if data["margin"] == 0 else ("predictor" if data["margin"] > 0 else "baseline")
    return cast(Comparison, data)


def list_comparisons(
    conn: Connection, *, winner: str | None = None, ema_updated: bool | None = None,
    min_margin: float | None = None, since: str | None = None, until: str | None = None,
    limit: int = 50, offset: int = 0,
) -> tuple[list[Comparison], int]:
    """Comparisons newest first with the seed's filters; returns (page, total matching)."""
    clauses: list[str] = []
    params: list[Any] = []
    if winner == "predictor":
        clauses.append("margin > 0")
    elif winner == "baseline":
        clauses.append("margin < 0")
    elif winner == "tie":
        clauses.append("margin = 0")
    if ema_updated is not None:
        clauses.append("ema_updated = ?")
        params.append(int(ema_updated))
    if min_margin is not None:
        clauses.append("ABS(margin) >= ?")
        params.append(min_margin)
    if since:
        clauses.append("created_at >= ?")
        params.append(normalize_iso(since))
    if until:
        clauses.append("created_at <= ?")
        params.append(normalize_iso(until))
    where = " AND ".join(clauses) or "1 = 1"
    total = conn.execute(f"SELECT COUNT(*) FROM predictor_comparisons WHERE {where}", params).fetchone()[0]
    rows = conn.execute(
        f"SELECT * FROM predictor_comparisons WHERE {where} ORDER BY created_at DESC, rowid DESC"
        " LIMIT ? OFFSET ?", params + [limit, offset],
    ).fetchall()
    return [_decode_comparison(r) for r in rows], total


def get_comparison(conn: Connection, comparison_id: str) -> Comparison | None:
    row = conn.execute("SELECT * FROM predictor_comparisons WHERE id = ?", (comparison_id,)).fetchone()
    return _decode_comparison(row) if row else None


def comparison_for_session(conn: Connection, session_key: str) -> Comparison | None:
    row = conn.execute(
        "SELECT * FROM predictor_comparisons WHERE session_key = ? ORDER BY created_at DESC, rowid DESC LIMIT 1",
        (session_key,),
    ).fetchone()
    return _decode_comparison(row) if row else None


# -- training log ---------------------------------------------------------------


def insert_training_log(conn: Connection, row: TrainingLogRecord) -> int:
    data = dict(row)
    data.setdefault("created_at", now_iso())
    for name in ("gates", "loss_curve"):
        if name in data and not isinstance(data[name], str):
            data[name] = json.dumps(data[name])
    columns = [c for c in (
        "model_version", "trigger", "loss", "step", "sample_count", "samples_skipped", "duration_ms",
        "canary_ndcg", "canary_ndcg_delta", "canary_score_variance", "canary_topk_churn",
        "canary_topk_overlap", "gates", "swapped", "train_validation_failures", "drift_resets",
        "loss_curve", "error", "created_at") if c in data]
    cur = conn.execute(
        f"INSERT INTO predictor_training_log({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
        [data[c] for c in columns],
    )
    return inserted_id(cur)


def list_training_log(conn: Connection, *, limit: int = 50, offset: int = 0) -> tuple[list[TrainingLogEntry], int]:
    total = conn.execute("SELECT COUNT(*) FROM predictor_training_log").fetchone()[0]
    rows = conn.execute(
        "SELECT * FROM predictor_training_log ORDER BY id DESC LIMIT ? OFFSET ?", (limit, offset)
    ).fetchall()
    out: list[TrainingLogEntry] = []
    for r in rows:
        data = dict(r)
        data["gates"] = json.loads(data["gates"] or "{}")
        data["loss_curve"] = json.loads(data["loss_curve"] or "[]")
        data["swapped"] = bool(data["swapped"])
        out.append(cast(TrainingLogEntry, data))
    return out, int(total)


# -- drift and calibration -----------------------------------------------------------


DRIFT_SAMPLE_ROWS = 2000  # the newest judged candidate rows the drift signal averages (≈ 20 sessions' pools)


def relevance_by_memory_age(conn: Connection, since: str, limit: int = DRIFT_SAMPLE_ROWS) -> AgeRelevance:
    """Average judge relevance for young (< 7 d) vs old (> 30 d) memories over the newest `limit`
    judged candidate rows of sessions since `since` (those whose memory still exists): m039's index
    newest first, each row's memory and session looked up by key — a bounded read whatever the
    store's size (every row since `since` joined with its memory was 1.2 s at a million memories,
    issue 36; as a join the planner still hashed every memory for 5,000 rows: 0.57 s at 200k)."""
    row = conn.execute(
        "SELECT AVG(CASE WHEN age < 7 THEN rel END) AS recent_avg,"
        " AVG(CASE WHEN age > 30 THEN rel END) AS old_avg, COUNT(*) AS samples FROM ("
        "  SELECT rel, julianday(COALESCE(started, at)) - julianday(born) AS age FROM ("
        "   SELECT sm.relevance_score AS rel, sm.created_at AS at,"
        "    (SELECT m.created_at FROM memories m WHERE m.id = sm.memory_id) AS born,"
        "    (SELECT s.started_at FROM sessions s WHERE s.session_key = sm.session_key) AS started"
        "   FROM session_memories sm WHERE sm.relevance_score IS NOT NULL AND sm.created_at >= ?"
        "   ORDER BY sm.created_at DESC LIMIT ?) newest"
        "  WHERE born IS NOT NULL) judged",
        (since, limit),
    ).fetchone()
    return AgeRelevance(row["recent_avg"], row["old_avg"], row["samples"])


def insert_drift_signal(conn: Connection, drift_signal: float | None, recent_avg: float | None,
                        old_avg: float | None, samples: int) -> None:
    conn.execute(
        "INSERT INTO predictor_drift_signals(drift_signal, recent_avg, old_avg, samples, created_at)"
        " VALUES (?, ?, ?, ?, ?)", (drift_signal, recent_avg, old_avg, samples, now_iso()),
    )


def list_drift_signals(conn: Connection, limit: int = 100) -> list[DriftSignal]:
    return [DriftSignal(r["id"], r["drift_signal"], r["recent_avg"], r["old_avg"], r["samples"], r["created_at"])
            for r in conn.execute(
        "SELECT id, drift_signal, recent_avg, old_avg, samples, created_at FROM predictor_drift_signals"
        " ORDER BY id DESC LIMIT ?", (limit,)
    )]


def drift_resets(conn: Connection, limit: int = 100) -> list[DriftReset]:
    return [DriftReset(r["id"], r["model_version"], r["swapped"], r["loss"], r["created_at"]) for r in conn.execute(
        "SELECT id, model_version, swapped, loss, created_at FROM predictor_training_log"
        " WHERE trigger = 'drift_reset' ORDER BY id DESC LIMIT ?", (limit,)
    )]


def upsert_calibration(conn: Connection, session_key: str, memory_id: str, human_label: float) -> CalibrationLabel:
    row = conn.execute(
        "SELECT relevance_score FROM session_memories WHERE session_key = ? AND memory_id = ?",
        (session_key, memory_id),
    ).fetchone()
    scorer = row[0] if row else None
    delta = None if scorer is None else human_label - scorer
    conn.execute(
        "INSERT INTO predictor_calibration(session_key, memory_id, human_label, scorer_label, delta, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(session_key, memory_id) DO UPDATE SET"
        " human_label = excluded.human_label, scorer_label = excluded.scorer_label,"
        " delta = excluded.delta, created_at = excluded.created_at",
        (session_key, memory_id, human_label, scorer, delta, now_iso()),
    )
    return {"session_key": session_key, "memory_id": memory_id, "human_label": human_label,
            "scorer_label": scorer, "delta": delta}


def calibration_summary(conn: Connection) -> CalibrationSummary:
    row = conn.execute(
        "SELECT COUNT(*) AS labels, COUNT(DISTINCT session_key) AS sessions, AVG(ABS(delta)) AS mae"
        " FROM predictor_calibration WHERE delta IS NOT NULL"
    ).fetchone()
    return CalibrationSummary(row["labels"], row["sessions"], row["mae"])


def session_audit_rows(conn: Connection, session_key: str) -> list[dict[str, object]]:
    """session_memories for one session joined with memory content previews."""
    rows = conn.execute(
        "SELECT sm.*, substr(m.content, 1, 200) AS content_preview, m.superseded_by, m.is_deleted"
        " FROM session_memories sm LEFT JOIN memories m ON m.id = sm.memory_id"
        " WHERE sm.session_key = ? ORDER BY sm.rank, sm.memory_id", (session_key,),
    ).fetchall()
    return [dict(r) for r in rows]
