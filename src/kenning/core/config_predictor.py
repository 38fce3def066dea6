"""The `predictor:` section of config.yaml (filled in by the predictor capability)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class PredictorSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
