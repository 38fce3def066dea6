"""/api/diagnostics: the health report (composite + eight domains) and one domain at a time."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from kenning.api.deps import get_kenning
from kenning.api.schemas import errors
from kenning.diagnostics import repair
from kenning.diagnostics.report import build_report, domain_report, gather_facts, probes_from
from kenning.service import Kenning

router = APIRouter(prefix="/api/diagnostics", tags=["observability"])


@router.get("")
def diagnostics(k: Kenning = Depends(get_kenning)) -> dict:
    """Composite score and status, every domain with its metrics, and each problem with its fix."""
    return build_report(k.db, k.settings, probes_from(k))


@router.get("/{domain}", responses=errors(404))
def diagnostics_domain(domain: str, k: Kenning = Depends(get_kenning)) -> dict:
    """One domain: queue, storage, index, provider, mutation, duplicate, connector or predictor."""
    return domain_report(gather_facts(k.db, k.settings, probes_from(k)), domain)


class RepairIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    actions: list[str] = Field(default_factory=lambda: list(repair.ACTIONS), max_length=10,
                               json_schema_extra={"items": {"type": "string", "enum": list(repair.ACTIONS)}},
                               description="rebuild_fts and/or reembed (default both).")


@router.post("/repair")
def repair_store(body: RepairIn, k: Kenning = Depends(get_kenning)) -> dict:
    """Run safe repairs (rebuild the FTS index, embed memories lacking vectors), then re-diagnose."""
    results = repair.run(k.db, k.embedder, body.actions)
    return {"results": results, "report": build_report(k.db, k.settings, probes_from(k))}
