"""Liveness and a short stats summary."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from kenning import __version__
from kenning.api.deps import get_kenning
from kenning.service import Kenning

router = APIRouter(tags=["health"])


@router.get("/api/health")
def health(k: Kenning = Depends(get_kenning)) -> dict:
    return {"status": "ok", "version": __version__, "embedding_model": k.embedder.model_id,
            "home": str(k.settings.home)}


@router.get("/api/stats")
def stats(k: Kenning = Depends(get_kenning)) -> dict:
    return k.stats()
