"""The `predictor:` section of config.yaml: the scorer seed's eight exposed parameters.

Everything else the seed lists as "hardcoded defaults" lives in
`kenning.predictor.constants` on purpose: fewer knobs, robust defaults.
Keys are snake_case; the seed's camelCase spellings are accepted as aliases.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class PredictorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    enabled: bool = Field(
        True,
        description="Run the predictor sidecar. On by default: it has no influence (alpha = 1) "
        "until it beats the baseline, so enabling it only costs a background process.",
    )
    train_interval_sessions: int = Field(
        10, ge=1, le=10_000, alias="trainIntervalSessions",
        description="Retrain after every N completed, scored sessions.",
    )
    min_training_sessions: int = Field(
        10, ge=1, le=10_000, alias="minTrainingSessions",
        description="High-confidence sessions needed before the predictor may leave cold start.",
    )
    score_timeout_ms: int = Field(
        120, ge=5, le=10_000, alias="scoreTimeoutMs",
        description="A score request slower than this falls back to the baseline ranking.",
    )
    crash_disable_threshold: int = Field(
        3, ge=1, le=1000, alias="crashDisableThreshold",
        description="Sidecar crashes (or hangs) within one hour after which it is disabled.",
    )
    rrf_k: int = Field(
        12, ge=1, le=1000, alias="rrfK",
        description="RRF constant; 12 suits ~50-100 candidates (k=60 flattens rank differences).",
    )
    exploration_rate: float = Field(
        0.05, ge=0.0, le=1.0, alias="explorationRate",
        description="Probability per session of swapping the last injected slot for the candidate "
        "the two rankers disagree on most (never during cold start).",
    )
    drift_reset_window: int = Field(
        10, ge=1, le=10_000, alias="driftResetWindow",
        description="Consecutive sessions with success_rate < 0.3 that trigger a drift reset.",
    )
