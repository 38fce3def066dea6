"""Settings of the laptop side of a team: where the team server is and who you are there."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class TeamSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(
        None, pattern=r"^https?://[^\s/]+(/.*)?$",
        description="The team server (http(s)://host:port). Set: memories written with scope team or org go "
        "there, and recall (API, CLI, MCP) merges its results with this daemon's. None: everything stays local.",
    )
    token: str | None = Field(
        None, description="Your user token on the team server (`kenning token create NAME` there); the "
        "KENNING_TEAM_TOKEN environment variable overrides it.",
    )
    timeout_s: float = Field(
        3.0, gt=0, le=60, description="Per request to the team server; past it recall answers with this "
        "daemon's results only and a team write fails with a clear error.",
    )
