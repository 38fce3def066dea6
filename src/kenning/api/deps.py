"""FastAPI dependencies: the one Kenning service of this daemon."""

from __future__ import annotations

from fastapi import Request

from kenning.core.types import Viewer
from kenning.service import Kenning


def get_kenning(request: Request) -> Kenning:
    return request.app.state.kenning


def get_viewer(request: Request) -> Viewer:
    """Who asks (set by the request guard): a team server's user, or the local user who sees all."""
    viewer = getattr(request.state, "viewer", None)
    return viewer if viewer is not None else request.app.state.kenning.local_viewer
