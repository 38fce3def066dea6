"""FastAPI dependencies: the one Kenning service of this daemon."""

from __future__ import annotations

from fastapi import Request

from kenning.service import Kenning


def get_kenning(request: Request) -> Kenning:
    return request.app.state.kenning
