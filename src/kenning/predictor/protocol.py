"""The sidecar's JSON-RPC messages (one JSON object per line on its stdin/stdout), as TypedDicts.

They stay dicts because they cross a process boundary as JSON; these types name their keys.
Every key is optional on the wire (the sidecar validates: features.request_sample).
"""

from __future__ import annotations

from typing import TypedDict

# A JSON-RPC request id (the daemon numbers its requests; None: a notification, no reply).
RpcId = int | str | None


class ScoreSignals(TypedDict, total=False):
    """The seed's `signals` block: session-level features when no feature matrix is sent."""

    time_of_day: float
    day_of_week: int
    month_of_year: int
    project: str | None
    session_gap_hours: float | None
    is_superseded: list[bool]


class ScoreRequest(TypedDict, total=False):
    """`score` params (also one session of `train`, with `labels`)."""

    session_key: str | None
    project: str | None
    context_text: str | None
    embedding_dims: int
    candidate_ids: list[str]
    candidate_embeddings_b64: str  # float32 little-endian, candidates x embedding_dims
    candidate_has_embedding: list[bool]
    candidate_embeddings: list[list[float] | None]  # the same as lists (the seed's form)
    candidate_texts: list[str | None]
    candidate_features: list[list[float]]  # candidates x N_FEATURES
    context_embedding_b64: str
    context_embedding: list[float] | None
    signals: ScoreSignals
    labels: list[float]
    temperature: float


class ScoredId(TypedDict):
    id: str
    score: float


class ScoreReply(TypedDict, total=False):
    scores: list[ScoredId]
    model_ready: bool
    model_version: int


class TrainRequest(TypedDict, total=False):
    """`train` (sessions sent inline) and `train_from_db` (read from the store) params."""

    sessions: list[ScoreRequest]
    canary: list[ScoreRequest]
    epochs: int
    lr: float
    time_cap_s: float
    seed: int
    min_confidence: float
    embedding_model: str | None
    limit: int
    replay_size: int
    canary_keys: list[str]


class TrainReply(TypedDict, total=False):
    """What `train` / `train_from_db` answer (train.TrainResult.summary and the engine's additions):
    the fields the trainer records."""

    swapped: bool
    canary: dict[str, float]
    model_version: int
    trained_through: str | None
    loss: float | None
    steps: int
    samples_used: int
    samples_skipped: dict[str, int]
    duration_ms: float
    gates: dict[str, object]
    loss_curve: list[float]
    error: str | None


class CheckpointRequest(TypedDict, total=False):
    path: str


class CheckpointReply(TypedDict, total=False):
    path: str
    bytes: int
    model_version: int
    flags: int


class CheckpointMeta(TypedDict):
    model_version: int
    steps: int
    training_pairs: int
    last_trained: str | None
