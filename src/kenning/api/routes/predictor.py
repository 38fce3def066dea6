"""/api/predictor: the learned scorer's status, comparisons, audits, training and drift."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from kenning.api.deps import get_kenning
from kenning.api.schemas import Offset, errors
from kenning.core.clock import normalize_iso
from kenning.core.errors import Conflict
from kenning.service import Kenning

router = APIRouter(prefix="/api/predictor", tags=["predictor"], responses=errors(409))


def _predictor(k: Kenning):
    predictor = k.predictor
    if predictor is None:
        raise Conflict("the predictor is not part of this daemon")
    return predictor


@router.get("/status")
def status(k: Kenning = Depends(get_kenning)) -> dict:
    """Model state, α, success rates, sidecar health, latency, config."""
    return _predictor(k).status()


@router.get("/comparisons")
def comparisons(
    winner: Literal["predictor", "baseline", "tie"] | None = None,
    ema_updated: bool | None = None,
    min_margin: float | None = Query(None, ge=0, le=1, description="|predictor NDCG - baseline NDCG| at least"),
    since: str | None = Query(None, description="ISO date/time, inclusive", min_length=1, json_schema_extra={"format": "date-time"}),
    until: str | None = Query(None, description="ISO date/time, inclusive", min_length=1, json_schema_extra={"format": "date-time"}),
    limit: int = Query(50, ge=1, le=500), offset: Offset = 0,
    k: Kenning = Depends(get_kenning),
) -> dict:
    """Comparison history, newest first, with the seed's filters and pagination."""
    return _predictor(k).comparisons(
        winner=winner, ema_updated=ema_updated, min_margin=min_margin,
        since=normalize_iso(since) if since else None, until=normalize_iso(until) if until else None,
        limit=limit, offset=offset,
    )


@router.get("/comparisons/{comparison_id}", responses=errors(404))
def comparison(comparison_id: str, k: Kenning = Depends(get_kenning)) -> dict:
    """One comparison with the session's full candidate list and the judge's reasoning."""
    return _predictor(k).comparison(comparison_id)


@router.get("/audit/{session_key}", responses=errors(404))
def audit(session_key: str, k: Kenning = Depends(get_kenning)) -> dict:
    """Both rankings, labels and how they were built, FTS overlap, confidence gate, EMA update."""
    return _predictor(k).audit(session_key)


@router.get("/training")
def training(limit: int = Query(50, ge=1, le=500), offset: Offset = 0,
             k: Kenning = Depends(get_kenning)) -> dict:
    """Training runs (loss curve, canary metrics, gates, model versions) and drift resets."""
    return _predictor(k).training_history(limit=limit, offset=offset)


@router.get("/drift")
def drift(k: Kenning = Depends(get_kenning)) -> dict:
    """Judge calibration drift signal now and over time, plus drift-reset history."""
    return _predictor(k).drift()


@router.post("/train")
def train(wait: bool = Query(True, description="false: start in the background and return"),
          k: Kenning = Depends(get_kenning)) -> dict:
    """Train now from the database (gated; swaps only if every gate passes)."""
    predictor = _predictor(k)
    if not wait:
        return {"started": predictor.train_async("manual")}
    return predictor.train_now("manual")


class CalibrationLabel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    session_key: str = Field(min_length=1, max_length=200)
    memory_id: str = Field(min_length=1, max_length=200)
    human_label: float = Field(ge=-1, le=1)


@router.post("/calibration")
def calibration(body: CalibrationLabel, k: Kenning = Depends(get_kenning)) -> dict:
    """Add a human spot-check label to the judge calibration set."""
    return _predictor(k).add_calibration(body.session_key, body.memory_id, body.human_label)
