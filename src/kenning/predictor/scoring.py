"""Scoring a session's pool: features → the sidecar's `score` → fusion with the baseline ranking,
and recording what was scored (the session's context row, written in the background).

`Scoring.score` never raises and answers within score_timeout_ms (+ feature building); None
means "use the baseline". The history features it sends are the same `History` training reads,
loaded once and refreshed at each session end (`refresh_history`).
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from kenning.core import telemetry
from kenning.core.clock import now_iso, parse_iso, to_iso
from kenning.core.config_predictor import PredictorSettings
from kenning.predictor import alpha as A
from kenning.predictor.context import Candidate, ScoringContext, VectorLike
from kenning.predictor.features import candidate_features, encode_b64, time_features
from kenning.predictor.fusion import Fused, PredictorScores, explore, rank_by_score, rrf_fuse
from kenning.predictor.history import NO_HISTORY, History, catch_up, load_all
from kenning.predictor.lifecycle import Sidecar
from kenning.predictor.protocol import ScoreReply, ScoreRequest
from kenning.store import predictor as store
from kenning.store.backend import StoreDatabase


HISTORY_FULL_READ_S = 3600.0  # a daemon's history features read whole again at most this often


def _unseen(params: ScoreRequest, candidates: Sequence[Candidate], trained_through: str | None) -> list[str]:
    """Candidates the serving model knows nothing about: history features all "never"
    (history.NO_HISTORY), or created after the newest session it learned from — a memory
    that came in after the last training (a drift's new preferences) is scored only by
    its resemblance to what the model learned before (issue 11)."""
    n = len(NO_HISTORY)
    cutoff = parse_iso(trained_through) if trained_through else None
    out = []
    for m, row, c in zip(params.get("candidate_ids", []), params.get("candidate_features", []), candidates):
        created = c.created_at
        if tuple(row[-n:]) == NO_HISTORY or (cutoff is not None and created and parse_iso(created) > cutoff):
            out.append(m)
    return out


def _vector(value: VectorLike | None) -> np.ndarray | None:
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return np.frombuffer(bytes(value), dtype=np.float32)
    arr = np.asarray(value, dtype=np.float32)
    return arr if arr.ndim == 1 and arr.size else None


@dataclass(frozen=True, slots=True)
class _ContextRow:
    """One scored pool's context, as store.predictor.upsert_session_context takes it."""

    project: str | None
    context_text: str
    embedding: bytes | None
    embedding_dims: int | None
    alpha: float
    model_version: int | None
    scored: bool
    latency_ms: float


class ContextRecorder:
    """Writes each scored pool's context row (session_contexts) from a background thread, so
    recording never blocks scoring; `flush` waits for the queue (session end reads the rows)."""

    def __init__(self, db: StoreDatabase) -> None:
        self.db = db
        self._queue: queue.Queue[tuple[str, _ContextRow]] = queue.Queue()
        self._writer: threading.Thread | None = None
        self._lock = threading.Lock()

    def record(self, ctx: ScoringContext, *, scored: bool, alpha: float, result: ScoreReply | None,
               latency_ms: float) -> None:
        key = ctx.session_key
        if not key or self.db.read_only:
            return
        if ctx.phase:  # a later pool of the session (e.g. 'prompt:1'): its own context row
            key = f"{key}#{ctx.phase}"
        vec = _vector(ctx.embedding)
        row = _ContextRow(
            project=ctx.project, context_text=(ctx.text or "")[:4000],
            embedding=vec.tobytes() if vec is not None else None,
            embedding_dims=int(vec.shape[0]) if vec is not None else None,
            alpha=alpha if scored else 1.0,
            model_version=(result or {}).get("model_version"), scored=scored, latency_ms=latency_ms,
        )
        self._queue.put((key, row))
        with self._lock:
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(target=self._write, daemon=True, name="predictor-context-writer")
                self._writer.start()

    def _write(self) -> None:
        while True:
            try:
                key, row = self._queue.get(timeout=5.0)
            except queue.Empty:
                return
            try:
                with self.db.with_write_tx() as conn:
                    store.upsert_session_context(conn, key, **asdict(row))
            except Exception as exc:  # background boundary: recording must not break anything
                telemetry.record_error("predictor", f"predictor_context_record_failed: {exc}", session_key=key)
            finally:
                self._queue.task_done()

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until queued scoring contexts are written."""
        deadline = time.monotonic() + timeout_s
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.005)
        return not self._queue.unfinished_tasks


class Scoring:
    """Scores pools through the sidecar and fuses them with the baseline at the current α."""

    def __init__(self, cfg: PredictorSettings, db: StoreDatabase, sidecar: Sidecar, alpha: A.AlphaCell) -> None:
        self.cfg = cfg
        self.db = db
        self.sidecar = sidecar
        self.cell = alpha
        self.contexts = ContextRecorder(db)
        self._rng = random.Random()
        self._history: History | None = None  # history features, as of the last session end
        self._history_lock = threading.Lock()  # one reader of the store's history at a time
        self._history_read_at = 0.0  # monotonic time of the last full read

    def alpha(self) -> float:
        """The baseline's weight in the next fusion."""
        return A.current_alpha(self.cell.state, disabled=self.sidecar.serving_disabled)

    def score(self, session_context: ScoringContext, candidates: Sequence[Candidate]) -> PredictorScores | None:
        """Predictor scores by memory id, or None: use the baseline. Never raises."""
        started = time.perf_counter()
        result: ScoreReply | None = None
        params: ScoreRequest = {}
        client = self.sidecar.client
        try:
            if client is not None and candidates and self.history_ready():
                params = self.params(session_context, candidates)
                result = client.score(params)
        except Exception as exc:  # boundary: a predictor problem must never reach the agent
            telemetry.record_error("predictor", f"predictor_score_error: {exc}")
        scores = None
        if result and result.get("model_ready"):
            scores = PredictorScores({s["id"]: float(s["score"]) for s in result.get("scores", [])},
                                     unseen=_unseen(params, candidates, self.cell.state.trained_through))
        latency = (time.perf_counter() - started) * 1000.0
        self.contexts.record(session_context, scored=scores is not None, alpha=self.alpha(), result=result,
                             latency_ms=latency)
        if scores is not None:
            top = max(scores, key=lambda m: scores[m]) if scores else None
            telemetry.log_event("predictor", "predictor.score", candidates=len(candidates),
                                top_pick=top, latency_ms=round(latency, 2), alpha=self.alpha(),
                                session_key=session_context.session_key)
        return scores

    def params(self, ctx: ScoringContext, candidates: Sequence[Candidate]) -> ScoreRequest:
        """The sidecar's `score` request for one pool (features, embeddings, signals)."""
        at = parse_iso(ctx.timestamp or now_iso())
        gap = ctx.session_gap_hours
        if gap is None:
            previous = store.previous_session_start(self.db.reader(), to_iso(at))
            gap = (at - parse_iso(previous)).total_seconds() / 3600.0 if previous else None
        when = time_features(at, gap)
        vecs = [_vector(c.embedding) for c in candidates]
        dims = self.sidecar.native_dim
        has = [v is not None and v.shape[0] == dims for v in vecs]
        matrix = np.zeros((len(candidates), dims), np.float32)
        for i, v in enumerate(vecs):
            if has[i]:
                matrix[i] = v
        ctx_vec = _vector(ctx.embedding)
        ids = [str(c.id) for c in candidates]
        hist = self.history().features(ids, to_iso(at), ctx.project, exclude=ctx.session_key)
        params: ScoreRequest = {
            "session_key": ctx.session_key, "project": ctx.project,
            "context_text": ctx.text, "embedding_dims": dims,
            "candidate_ids": ids,
            "candidate_embeddings_b64": encode_b64(matrix), "candidate_has_embedding": has,
            "candidate_texts": [None if has[i] else c.content for i, c in enumerate(candidates)],
            "candidate_features": [candidate_features(c, at, when, has[i]) + hist[i].tolist()
                                   for i, c in enumerate(candidates)],
            "signals": {"time_of_day": (at.hour + at.minute / 60) / 24, "day_of_week": at.weekday(),
                        "month_of_year": at.month, "project": ctx.project, "session_gap_hours": gap},
        }
        if ctx_vec is not None and ctx_vec.shape[0] == dims:
            params["context_embedding_b64"] = encode_b64(ctx_vec[None, :])
        return params

    def history(self) -> History:
        """Every signal event, loaded once and kept current at each session end (reading a hundred
        candidates' events per score cost 100-300 ms at 500 sessions; bench/predictor_speed.py).
        The same `History` training reads, so scoring and training see the same values."""
        history = self._history
        if history is None:
            with self._history_lock:
                history = self._history or self._read_history()
        return history

    def history_ready(self) -> bool:
        """Whether a score can have its history features now: loaded, or loaded here when no other
        thread is reading it; False while another thread reads it the first time. That read takes
        seconds at a million memories: session starts that waited behind it filled the hook pool,
        and the 20 after a daemon's start took 300-500 ms (issue 36). They score with the baseline
        instead; a daemon's start reads it in the background (`Predictor.start`)."""
        if self._history is not None:
            return True
        if not self._history_lock.acquire(blocking=False):
            return False
        try:
            if self._history is None:
                self._read_history()
        finally:
            self._history_lock.release()
        return True

    def warm(self) -> None:
        """Read the history now unless it is read or being read (a daemon's start, in the background)."""
        try:
            self.history_ready()
        except Exception as exc:  # background thread boundary: the first score reads it again
            telemetry.record_error("predictor", f"predictor_history_read_failed: {exc}")

    def refresh_history(self) -> None:
        """Catch the loaded history up with the sessions that ended since (history.catch_up); read it
        all again once HISTORY_FULL_READ_S has passed (rows changed after their session ended)."""
        with self._history_lock:
            if self._history is None or time.monotonic() - self._history_read_at > HISTORY_FULL_READ_S:
                self._read_history()
            else:
                catch_up(self._history, self.db.reader())

    def _read_history(self) -> History:
        history = self._history = load_all(self.db.reader())
        self._history_read_at = time.monotonic()
        return history

    def fuse(self, baseline_ranked_ids: list[str], predictor_scores: dict[str, float] | None, *,
             top_k: int | None = None) -> list[Fused]:
        """RRF of the two rankings with the current α (+ exploration when top_k is given)."""
        predictor_ids = rank_by_score(predictor_scores) if predictor_scores else None
        fused = rrf_fuse(baseline_ranked_ids, predictor_ids, self.alpha(), self.cfg.rrf_k, top_k,
                         unseen=predictor_scores.unseen if isinstance(predictor_scores, PredictorScores) else ())
        if top_k is not None:
            fused = explore(fused, top_k, self.cfg.exploration_rate, self._rng,
                            enabled=predictor_ids is not None and self.cell.state.cold_start_exited)
        return fused
