"""The `sessions:` section of config.yaml (filled in by the sessions capability)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SessionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
