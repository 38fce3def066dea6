"""Pipeline status and worker control: GET /api/pipeline/status, POST /api/pipeline/workers/{name}/…"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from kenning.api.deps import get_kenning
from kenning.api.schemas import errors
from kenning.service import JOB_STATUSES, Kenning

router = APIRouter(tags=["pipeline"])


@router.get("/api/pipeline/status")
def status(k: Kenning = Depends(get_kenning)) -> dict:
    """Workers, queue depths, dead jobs, token budget, mode flags, and why anything waits."""
    return k.pipeline_status()


@router.get("/api/pipeline/jobs")
def list_jobs(
    status: str | None = Query(None, description="pending | leased | completed | dead",
                                json_schema_extra={"enum": list(JOB_STATUSES)}),
    job_type: str | None = Query(None), memory_id: str | None = Query(None),
    limit: int = Query(50, ge=1, le=1000), k: Kenning = Depends(get_kenning),
) -> dict:
    return {"items": k.jobs(status=status, job_type=job_type, memory_id=memory_id, limit=limit)}


@router.post("/api/pipeline/workers/{name}/start", responses=errors(404))
def start_worker(name: str, k: Kenning = Depends(get_kenning)) -> dict:
    return k.start_worker(name)


@router.post("/api/pipeline/workers/{name}/stop", responses=errors(404))
def stop_worker(name: str, k: Kenning = Depends(get_kenning)) -> dict:
    return k.stop_worker(name)


@router.post("/api/pipeline/dead/requeue")
def requeue_dead(job_type: str | None = Query(None), limit: int = Query(100, ge=1, le=10_000),
                 k: Kenning = Depends(get_kenning)) -> dict:
    return {"requeued": k.requeue_dead_jobs(job_type=job_type, limit=limit)}
