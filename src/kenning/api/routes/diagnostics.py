"""/api/diagnostics: the health report (composite + eight domains) and one domain at a time."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from kenning.api.deps import get_kenning
from kenning.api.schemas import errors
from kenning.diagnostics import repair
from kenning.service import Kenning

router = APIRouter(prefix="/api/diagnostics", tags=["observability"])


@router.get("")
def diagnostics(k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:
    """Composite score and status, every domain with its metrics, and each problem with its fix."""
    return k.diagnostics()


@router.get("/{domain}", responses=errors(404))
def diagnostics_domain(domain: str, k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:
    """One domain: queue, storage, index, provider, mutation, duplicate, connector or predictor."""
    return k.diagnostics_domain(domain)


class RepairIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    actions: list[str] = Field(default_factory=lambda: list(repair.ACTIONS), max_length=10,
                               json_schema_extra={"items": {"type": "string", "enum": list(repair.ACTIONS)}},
                               description="rebuild_fts and/or reembed (default both).")


@router.post("/repair")
def repair_store(body: RepairIn, k: Kenning = Depends(get_kenning)) -> dict:
    """Run safe repairs (rebuild the FTS index, embed memories lacking vectors), then re-diagnose."""
    results = k.repair(body.actions)
    return {"results": results, "report": k.diagnostics()}
