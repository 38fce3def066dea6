"""Liveness and a short stats summary."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from kenning import __version__
from kenning.api.deps import get_kenning
from kenning.api.guard import token_ok
from kenning.service import Kenning

router = APIRouter(tags=["health"])


class HealthOut(BaseModel):
    status: str = Field(description="ok while the daemon answers.")
    version: str | None = Field(None, description="Left out when a token is set and not sent.")
    embedding_model: str | None = Field(None, description="Left out when a token is set and not sent.")
    home: str | None = Field(None, description="Left out when a token is set and not sent.")


@router.get("/api/health", response_model=HealthOut, response_model_exclude_none=True)
def health(request: Request, k: Kenning = Depends(get_kenning)) -> HealthOut:
    """Liveness for anyone; version, model and home only with the token (when one is set)."""
    if not token_ok(request.headers.get("authorization"), k.settings.auth_token):
        return HealthOut(status="ok")
    return HealthOut(status="ok", version=__version__, embedding_model=k.embedding_model,
                     home=str(k.settings.home))


@router.get("/api/stats")
def stats(k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:
    return k.stats()
