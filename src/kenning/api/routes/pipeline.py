"""Pipeline status and worker control: GET /api/pipeline/status, POST /api/pipeline/workers/{name}/…"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query

from kenning.api.deps import get_kenning
from kenning.api.schemas import errors
from kenning.core.errors import InvalidInput
from kenning.service import Kenning
from kenning.store import jobs
from kenning.workers.status import pipeline_status

router = APIRouter(tags=["pipeline"])


@router.get("/api/pipeline/status")
def status(k: Kenning = Depends(get_kenning)) -> dict:
    """Workers, queue depths, dead jobs, token budget, mode flags, and why anything waits."""
    return pipeline_status(k)


@router.get("/api/pipeline/jobs")
def list_jobs(
    status: str | None = Query(None, description="pending | leased | completed | dead",
                                json_schema_extra={"enum": list(jobs.STATUSES)}),
    job_type: str | None = Query(None), memory_id: str | None = Query(None),
    limit: int = Query(50, ge=1, le=1000), k: Kenning = Depends(get_kenning),
) -> dict:
    if status is not None and status not in jobs.STATUSES:
        raise InvalidInput(f"unknown job status {status!r}; one of {', '.join(jobs.STATUSES)}")
    items = jobs.list_jobs(k.db, status=status, job_type=job_type, memory_id=memory_id, limit=limit)
    return {"items": [j.to_dict() for j in items]}


@router.post("/api/pipeline/workers/{name}/start", responses=errors(404))
def start_worker(name: str, k: Kenning = Depends(get_kenning)) -> dict:
    k.workers.start(name)
    return k.workers.get(name).stats()


@router.post("/api/pipeline/workers/{name}/stop", responses=errors(404))
def stop_worker(name: str, k: Kenning = Depends(get_kenning)) -> dict:
    k.workers.stop(name)
    return k.workers.get(name).stats()


@router.post("/api/pipeline/dead/requeue")
def requeue_dead(job_type: str | None = Query(None), limit: int = Query(100, ge=1, le=10_000),
                 k: Kenning = Depends(get_kenning)) -> dict:
    return {"requeued": jobs.requeue_dead(k.db, job_type=job_type, limit=limit)}
