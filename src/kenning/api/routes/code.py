"""/api/code: the code graph — impact of a change, indexed projects, re-index on demand."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter, Depends, Query
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from kenning.api.deps import get_kenning
from kenning.api.schemas import errors
from kenning.core.limits import check_path
from kenning.codegraph import impact
from kenning.service import Kenning

router = APIRouter(prefix="/api/code", tags=["code"])


class IndexBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    path: str = Field(..., min_length=1, max_length=4096, description="Repository root on this machine.")
    project: str = Field(..., min_length=1, max_length=200, description="Project name to index it under.")


class RefreshBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    project: str | None = Field(None, min_length=1, max_length=200,
                                description="Indexed project; default: the one holding the files.")
    files: list[str] = Field(..., min_length=1, max_length=500, description="Changed files (absolute or root-relative).")


@router.get("/impact", responses=errors(404))
def code_impact(
    target: str = Query(..., min_length=1, max_length=1000, description="path, path:symbol or dotted name."),
    project: str | None = Query(None, max_length=200),
    depth: int = Query(3, ge=1, le=impact.MAX_DEPTH),
    cwd: str | None = Query(None, max_length=4096, description="Caller's directory, to pick the project."),
    k: Kenning = Depends(get_kenning),
) -> Mapping[str, object]:
    if cwd is not None:
        check_path("cwd", cwd)
    return k.code_impact(target, project=project, depth=depth, cwd=cwd)


@router.get("/memories", responses=errors(404))
def code_memories(
    files: list[str] = Query(..., min_length=1, max_length=200, description="Files the agent is touching."),
    project: str | None = Query(None, max_length=200),
    depth: int = Query(1, ge=0, le=3, description="Dependents within this many hops count as neighbours."),
    limit: int = Query(20, ge=1, le=200),
    k: Kenning = Depends(get_kenning),
) -> dict:
    """Memories attached to these files or their code neighbourhood, nearest first."""
    for file in files:
        check_path("files", file)
    return k.code_memories(files, project=project, depth=depth, limit=limit)


@router.get("/modules", responses=errors(404))
def code_modules(project: str = Query(..., min_length=1, max_length=200),
                 resolution: float = Query(1.0, gt=0, le=10, description="Louvain resolution (higher: smaller modules)."),
                 k: Kenning = Depends(get_kenning)) -> dict:
    """Module boundaries: Louvain communities of the file dependency graph, with modularity vs directories."""
    return k.code_modules(project, resolution=resolution)


@router.get("/projects")
def code_projects(k: Kenning = Depends(get_kenning)) -> dict:
    return k.code_projects()


@router.post("/index")
async def code_index(body: IndexBody, k: Kenning = Depends(get_kenning)) -> dict:
    check_path("path", body.path)
    report = await run_in_threadpool(k.code_index, body.path, body.project)
    return report.to_dict()


@router.post("/refresh")
async def code_refresh(body: RefreshBody, k: Kenning = Depends(get_kenning)) -> dict:
    """Re-index changed files now (their edges are stale until this returns)."""
    for file in body.files:
        check_path("files", file)
    project = body.project
    if project is None:
        found = k.code_project_for_path(body.files[0])
        if found is None:
            return {"project": None, "files": 0}
        project = found[0]
    report = await run_in_threadpool(k.code_refresh, project, body.files)
    return report.to_dict()
