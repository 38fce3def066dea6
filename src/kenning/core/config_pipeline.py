"""The `pipeline:` section of config.yaml (filled in by the pipeline capability)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class PipelineSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
