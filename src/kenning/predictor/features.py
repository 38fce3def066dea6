"""Samples: one session's candidates as vectors, tokens, 19 features and (for training) labels.

The same `feature_row` + `history.History.features` serve training (rows read from the
store) and scoring (candidate dicts sent by the daemon), so the model sees identical
features in both.

The 12 base features (scorer seed): log age (days), importance, log(access_count + 1),
time-of-day sin/cos, day-of-week sin/cos, month-of-year sin/cos, log session gap (hours),
is_embedded, is_superseded; then the 7 history features of history.py (days since positive
feedback, days since FTS hit, recent feedback mean, useful in the project's previous
session, co-use with what was useful there, the latest rating, useful in the project's last
three sessions).
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from kenning.core.clock import parse_iso
from kenning.predictor import constants as C
from kenning.predictor.confidence import judge_trust
from kenning.predictor.context import Candidate
from kenning.predictor.history import HISTORY_FEATURES, NO_HISTORY, History, load_all, rated_useful
from kenning.predictor.labels import SessionLabels, build_session_labels
from kenning.predictor.protocol import ScoreRequest, ScoreSignals
from kenning.predictor.tokens import hash_tokens, project_slot
from kenning.store import predictor as store
from kenning.store.backend import Connection
from kenning.store.predictor import CandidateRow, ScoredSession, SessionContextRow

FEATURE_NAMES = (
    "log_age_days", "importance", "log_access", "tod_sin", "tod_cos", "dow_sin", "dow_cos",
    "moy_sin", "moy_cos", "log_session_gap", "is_embedded", "is_superseded", *HISTORY_FEATURES,
)
BASE_FEATURES = 12


def decode_vector(blob: bytes | memoryview | None,
                  decoded: dict[bytes | memoryview, np.ndarray] | None = None) -> np.ndarray | None:
    """A stored vector as float32; with `decoded`, one array per distinct vector (a fit's memo): the
    samples of one fit then share each memory's vector, and so does the copy a fit process gets (a
    pickle keeps shared objects shared) — at 200k memories 78 MB of vectors a fit sent were 28 MB."""
    if not blob:
        return None
    if decoded is None:
        return np.frombuffer(blob, dtype=np.float32)
    found = decoded.get(blob)
    if found is None:
        found = decoded[blob] = np.frombuffer(blob, dtype=np.float32)
    return found


def encode_b64(matrix: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(matrix, dtype="<f4").tobytes()).decode("ascii")


def decode_b64(text: str, dims: int) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f4").reshape(-1, dims)


def time_features(at: datetime, session_gap_hours: float | None) -> list[float]:
    tod = (at.hour + at.minute / 60.0) / 24.0
    dow = at.weekday() / 7.0
    moy = (at.month - 1) / 12.0
    tau = 2 * math.pi
    gap = math.log1p(max(0.0, session_gap_hours)) if session_gap_hours is not None else 0.0
    return [math.sin(tau * tod), math.cos(tau * tod), math.sin(tau * dow), math.cos(tau * dow),
            math.sin(tau * moy), math.cos(tau * moy), gap]


def base_features(created: str | None, importance: float | None, access_count: int | None, superseded: bool,
                  at: datetime, when: list[float], is_embedded: bool) -> list[float]:
    """The 12 base features of one candidate (history features come from history.History)."""
    age_days = max(0.0, (at - parse_iso(created)).total_seconds() / 86400.0) if created else 0.0
    return [
        math.log1p(age_days), float(importance if importance is not None else 0.5),
        math.log1p(max(0, int(access_count or 0))), *when[:6], when[6],
        1.0 if is_embedded else 0.0, 1.0 if superseded else 0.0,
    ]


def feature_row(memory: CandidateRow, at: datetime, when: list[float], is_embedded: bool) -> list[float]:
    """The base features of a recorded candidate row (store.predictor.session_candidate_rows)."""
    return base_features(memory.get("created_at") or memory.get("memory_created_at"), memory.get("importance"),
                         memory.get("access_count"), bool(memory.get("superseded_by") or memory.get("is_superseded")),
                         at, when, is_embedded)


def candidate_features(candidate: Candidate, at: datetime, when: list[float], is_embedded: bool) -> list[float]:
    """The base features of a candidate sent for scoring: the same values as `feature_row`."""
    return base_features(candidate.created_at, candidate.importance, candidate.access_count,
                         bool(candidate.superseded_by), at, when, is_embedded)


@dataclass
class Sample:
    """One session (or one score request): everything the model needs, as numpy."""

    session_key: str
    ids: list[str]
    ctx_vec: np.ndarray | None
    ctx_tokens: list[int]
    cand_vecs: list[np.ndarray | None]
    cand_tokens: list[list[int]]
    features: np.ndarray  # [N, 19]
    project_slot: int
    labels: np.ndarray | None = None
    temperature: float = C.LOSS_TEMPERATURE
    meta: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0  # the session's weight in the loss (load_samples: recency)
    judged: np.ndarray | None = None  # [N] bool: candidates the loss reads (None: all)


@dataclass
class Batch:
    """B samples padded to N candidates, as numpy (`collate`); what a training step reads
    (`backprop.py`). Token lists are flattened bags: item r's words are
    tokens[offsets[r]:offsets[r + 1]] (the last runs to the end)."""

    ctx_emb: np.ndarray  # [B, native_dim] float32 (zeros where missing)
    ctx_has_emb: np.ndarray  # [B] bool
    ctx_tokens: np.ndarray  # [T_ctx] int64
    ctx_offsets: np.ndarray  # [B] int64
    cand_emb: np.ndarray  # [B, N, native_dim] float32
    cand_has_emb: np.ndarray  # [B, N] bool
    cand_tokens: np.ndarray  # [T] int64
    cand_offsets: np.ndarray  # [B*N] int64
    features: np.ndarray  # [B, N, n_features] float32
    project_slot: np.ndarray  # [B] int64
    mask: np.ndarray  # [B, N] bool: a candidate the loss reads (not padding, judged)
    labels: np.ndarray  # [B, N] float32 (0 where a sample has none)
    temperature: np.ndarray  # [B] float32
    meta: list[dict[str, Any]] = field(default_factory=list)


def collate(samples: list[Sample], native_dim: int) -> Batch:
    """Pad samples to one Batch (vectors of the wrong width are treated as missing)."""
    B = len(samples)
    N = max(1, max(len(s.ids) for s in samples))
    ctx = np.zeros((B, native_dim), np.float32)
    ctx_has = np.zeros(B, bool)
    cand = np.zeros((B, N, native_dim), np.float32)
    cand_has = np.zeros((B, N), bool)
    feats = np.zeros((B, N, C.N_FEATURES), np.float32)
    mask = np.zeros((B, N), bool)
    labels = np.zeros((B, N), np.float32)
    ctx_tokens: list[int] = []
    ctx_offsets: list[int] = []
    tokens: list[int] = []
    offsets: list[int] = []
    for b, s in enumerate(samples):
        n = len(s.ids)
        if s.ctx_vec is not None and s.ctx_vec.shape[0] == native_dim:
            ctx[b], ctx_has[b] = s.ctx_vec, True
        ctx_offsets.append(len(ctx_tokens))
        ctx_tokens.extend(s.ctx_tokens)
        for i in range(N):
            offsets.append(len(tokens))
            if i >= n:
                continue
            vec = s.cand_vecs[i]
            if vec is not None and vec.shape[0] == native_dim:
                cand[b, i], cand_has[b, i] = vec, True
            else:
                tokens.extend(s.cand_tokens[i])
        feats[b, :n] = s.features
        if n:
            feats[b, n:, 3:10] = s.features[0, 3:10]  # padding shares the session features
        mask[b, :n] = True if s.judged is None else s.judged
        if s.labels is not None:
            labels[b, :n] = s.labels
    return Batch(
        ctx_emb=ctx, ctx_has_emb=ctx_has, ctx_tokens=np.array(ctx_tokens, np.int64),
        ctx_offsets=np.array(ctx_offsets, np.int64), cand_emb=cand, cand_has_emb=cand_has,
        cand_tokens=np.array(tokens, np.int64), cand_offsets=np.array(offsets, np.int64),
        features=feats, project_slot=np.array([s.project_slot for s in samples], np.int64),
        mask=mask, labels=labels, temperature=np.array([s.temperature for s in samples], np.float32),
        meta=[s.meta for s in samples],
    )


def _cosine(a: np.ndarray | None, b: np.ndarray | None) -> float | None:
    if a is None or b is None or a.shape != b.shape:
        return None
    denom = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / denom if denom > 0 else None


def trust_of(conn: Connection) -> float:
    """How much the continuity judge is trusted now (confidence.judge_trust over the calibration)."""
    cal = store.judge_calibration(conn)
    return judge_trust(cal.mae, cal.labels)


def session_labels(conn: Connection, session: ScoredSession, model_name: str | None, trust: float | None = None,
                   history: History | None = None, decoded: dict[bytes | memoryview, np.ndarray] | None = None) -> tuple[
        SessionLabels, list[CandidateRow], list[np.ndarray | None], np.ndarray | None, SessionContextRow | None]:
    """Labels for one scored session, plus the rows, vectors and context they came from."""
    key = session["session_key"]
    trust = trust_of(conn) if trust is None else trust
    rows = store.session_candidate_rows(conn, key, model_name)
    vecs = [decode_vector(r["vector"], decoded) for r in rows]
    context = store.session_context(conn, key)
    ctx_vec = decode_vector(context["embedding"] if context else None)
    if ctx_vec is None:  # fall back to the mean of what was injected
        injected = [v for r, v in zip(rows, vecs) if r["was_injected"] and v is not None]
        ctx_vec = np.mean(np.stack(injected), axis=0).astype(np.float32) if injected else None
    labels = build_session_labels(session, rows, [_cosine(ctx_vec, v) for v in vecs], session.get("started_at"),
                                  touched=store.touched_ids(conn, key), trust=trust,
                                  rated_useful=rated_useful(conn, [r["memory_id"] for r in rows],
                                                            session.get("started_at"), history))
    return labels, rows, vecs, ctx_vec, context


def session_sample(conn: Connection, session: ScoredSession, model_name: str | None, history: History,
                   trust: float = 1.0, native_dim: int | None = None,
                   decoded: dict[bytes | memoryview, np.ndarray] | None = None) -> tuple[list[Sample], SessionLabels]:
    """The labelled training samples of one scored session: its session-start sample (context:
    the session context, candidates: every recorded row) and one per recorded later pool (the
    first prompt's: context the prompt, candidates that pool). Empty when unusable. With `native_dim`
    (the scorer's width), only candidates without a vector of that width get their words hashed:
    the model reads the text path for those alone (collate), and at 200k memories the hashed words
    of every candidate were the largest part of a fit's samples (issue 36)."""
    key = session["session_key"]
    labels, rows, vecs, ctx_vec, context = session_labels(conn, session, model_name, trust, history, decoded)
    if not labels.usable or not rows:
        return [], labels
    start = session.get("started_at")
    if start is None:  # (a scored session has its start)
        return [], labels
    at = parse_iso(start)
    previous = store.previous_session_start(conn, start)
    gap = (at - parse_iso(previous)).total_seconds() / 3600.0 if previous else None
    when = time_features(at, gap)
    project = session.get("project") or (context["project"] if context else None)
    ids = [r["memory_id"] for r in rows]
    base = np.array([feature_row(r, at, when, v is not None) for r, v in zip(rows, vecs)], np.float32)
    sample = Sample(
        session_key=key, ids=ids, ctx_vec=ctx_vec,
        ctx_tokens=hash_tokens((context["context_text"] if context else None) or session.get("session_context_text")),
        cand_vecs=vecs, cand_tokens=[hash_tokens(r.get("content")) if native_dim is None or v is None
                                     or v.shape[0] != native_dim else [] for r, v in zip(rows, vecs)],
        features=np.concatenate([base, history.features(ids, start, project, exclude=key)], axis=1),
        project_slot=project_slot(project), labels=np.array([c.label for c in labels.labels], np.float32),
        temperature=labels.temperature, judged=np.array([c.judged for c in labels.labels], bool),
        meta={"session_key": key, "score": session.get("score"), "confidence": session.get("confidence")},
    )
    return [sample, *_pool_samples(conn, sample, labels)], labels


def _pool_samples(conn: Connection, sample: Sample, labels: SessionLabels) -> list[Sample]:
    """One sample per recorded later pool: the session sample's rows for that pool's memories,
    scored against that pool's own context (e.g. the first prompt), labelled alike."""
    out = []
    index = {m: i for i, m in enumerate(sample.ids)}
    for phase, pool in store.pools(conn, sample.session_key).items():
        keep = [index[r["memory_id"]] for r in pool if r["memory_id"] in index]
        values = sample.labels[keep] if sample.labels is not None else None
        judged = sample.judged[keep] if sample.judged is not None else np.ones(len(keep), bool)
        if int(judged.sum()) < 2 or values is None or float(np.ptp(values[judged])) < C.SKIP_SPREAD:
            continue
        ctx = store.session_context(conn, f"{sample.session_key}#{phase}")
        ctx_vec = decode_vector(ctx["embedding"] if ctx else None)
        out.append(Sample(
            session_key=f"{sample.session_key}#{phase}", ids=[sample.ids[i] for i in keep],
            ctx_vec=ctx_vec if ctx_vec is not None else sample.ctx_vec,
            ctx_tokens=hash_tokens(ctx["context_text"] if ctx else None) or sample.ctx_tokens,
            cand_vecs=[sample.cand_vecs[i] for i in keep], cand_tokens=[sample.cand_tokens[i] for i in keep],
            features=sample.features[keep], project_slot=sample.project_slot, labels=values,
            temperature=labels.temperature, meta={**sample.meta, "phase": phase}, judged=judged,
        ))
    return out


def recency_weight(age: int, half_life: float | None) -> float:
    """0.5 ** (age / half_life): `age` sessions are newer than this one; 1.0 without a half-life."""
    return 0.5 ** (age / half_life) if half_life else 1.0


def load_samples(conn: Connection, sessions: list[ScoredSession], model_name: str | None, history: History | None = None,
                 trust: float | None = None, half_life: float | None = None,
                 native_dim: int | None = None,
                 decoded: dict[bytes | memoryview, np.ndarray] | None = None) -> tuple[list[Sample], dict[str, int]]:
    """Samples for the given sessions plus a count of skips by reason (pass `history` and
    `trust` when loading several lists in one training run: they are read once). With
    `half_life`, `sessions` come newest first and each sample weighs recency_weight(age). Pass one
    `decoded` memo to every load of a training run: its samples then share each distinct vector."""
    samples: list[Sample] = []
    skipped: dict[str, int] = {}
    if not sessions:
        return samples, skipped
    history = load_all(conn) if history is None else history
    trust = trust_of(conn) if trust is None else trust
    decoded = {} if decoded is None else decoded
    for age, session in enumerate(sessions):
        found, labels = session_sample(conn, session, model_name, history, trust, native_dim, decoded)
        for sample in found:
            sample.weight = recency_weight(age, half_life)
        if not found:
            reason = labels.skip_reason or "no_candidates"
            skipped[reason] = skipped.get(reason, 0) + 1
        samples.extend(found)
    return samples, skipped


def signal_features(signals: ScoreSignals, embedded: list[bool]) -> np.ndarray:
    """Features from the seed's `signals` block when a caller sends no feature matrix
    (memory-level features unknown: age 0, importance 0.5, no accesses)."""
    tau = 2 * math.pi
    tod = float(signals.get("time_of_day") or 0.0)
    dow = float(signals.get("day_of_week") or 0) / 7.0
    moy = (float(signals.get("month_of_year") or 1) - 1) / 12.0
    gap = math.log1p(max(0.0, float(signals.get("session_gap_hours") or 0.0)))
    superseded = signals.get("is_superseded") or [False] * len(embedded)
    when = [math.sin(tau * tod), math.cos(tau * tod), math.sin(tau * dow), math.cos(tau * dow),
            math.sin(tau * moy), math.cos(tau * moy), gap]
    rows = [[0.0, 0.5, 0.0, *when, 1.0 if e else 0.0, 1.0 if s else 0.0, *NO_HISTORY]
            for e, s in zip(embedded, superseded)]
    return np.asarray(rows, np.float32).reshape(len(embedded), C.N_FEATURES)


def request_sample(params: ScoreRequest, native_dim: int) -> Sample:
    """A Sample from a `score`/`train` request (embeddings as lists or base64 float32)."""
    ids = [str(i) for i in params.get("candidate_ids") or []]
    if not ids:  # the seed's `train` example names no ids: number the candidates
        count = len(params.get("labels") or params.get("candidate_embeddings") or params.get("candidate_texts") or [])
        ids = [f"c{i}" for i in range(count)]
    n = len(ids)
    if params.get("candidate_embeddings_b64"):
        dims = int(params.get("embedding_dims") or native_dim)
        matrix = decode_b64(params["candidate_embeddings_b64"], dims)
        has = params.get("candidate_has_embedding") or [True] * n
        vecs = [matrix[i] if has[i] else None for i in range(n)]
    else:
        raw = params.get("candidate_embeddings") or [None] * n
        vecs = [np.asarray(v, np.float32) if v else None for v in raw]
    if len(vecs) != n:
        raise ValueError(f"{len(vecs)} embeddings for {n} candidates")
    ctx = params.get("context_embedding")
    if params.get("context_embedding_b64"):
        ctx_vec = decode_b64(params["context_embedding_b64"], int(params.get("embedding_dims") or native_dim))[0]
    else:
        ctx_vec = np.asarray(ctx, np.float32) if ctx else None
    texts = params.get("candidate_texts") or [None] * n
    if params.get("candidate_features") is not None:
        features = np.asarray(params["candidate_features"], np.float32)
    else:
        features = signal_features(params.get("signals") or {}, [v is not None for v in vecs])
    if features.shape != (n, C.N_FEATURES):
        raise ValueError(f"candidate_features must be {n} x {C.N_FEATURES}, got {list(features.shape)}")
    labels = params.get("labels")
    return Sample(
        session_key=str(params.get("session_key") or ""), ids=ids, ctx_vec=ctx_vec,
        ctx_tokens=hash_tokens(params.get("context_text")), cand_vecs=vecs,
        cand_tokens=[hash_tokens(t) for t in texts], features=features,
        project_slot=project_slot(params.get("project")),
        labels=np.asarray(labels, np.float32) if labels is not None else None,
        temperature=float(params.get("temperature") or C.LOSS_TEMPERATURE),
    )
