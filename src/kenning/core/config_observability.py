"""The `observability:` section of config.yaml: diagnostics thresholds and the JSON log file."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ObservabilitySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    silent_failure_jobs: int = Field(
        10, ge=1, le=10_000,
        description="Finished extraction jobs in a row that produced nothing before the queue goes red.",
    )
    stalled_queue_minutes: float = Field(
        15.0, gt=0, le=10_080,
        description="A pending job older than this means the workers are not draining the queue.",
    )
    error_window_minutes: float = Field(
        60.0, gt=0, le=10_080, description="How far back the error ring counts against a domain's score.",
    )
    embedding_lag_tolerance: int = Field(
        5, ge=0, le=100_000,
        description="Live memories allowed to wait for a vector (raw-first writes embed afterwards).",
    )
    log_file: bool = Field(True, description="Write structured JSON logs to <home>/logs/kenning.jsonl.")
    log_file_max_bytes: int = Field(
        10_000_000, ge=10_000, description="Rotate the JSON log file at this size (5 backups kept).",
    )
