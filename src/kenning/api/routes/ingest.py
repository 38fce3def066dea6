"""/api/ingest/git: a git repository's commits as memories (issue 10, `kenning ingest git`).

- POST /api/ingest/git {path, project?, wait?} → the repository is checked in the request
  (not a git work tree: 400 with `{"error": …}`; already being ingested: 409); with `wait`
  the commits are ingested inside the request (200, the finished run), otherwise in the
  background (202, the run with its id and total).
- GET /api/ingest/git/{id} → the run's progress: status, done/total, created, deduped, error.
- GET /api/ingest/git → the repositories ingested so far, with their commit counts.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Response
from pydantic import BaseModel, ConfigDict, Field

from kenning.api.deps import get_kenning
from kenning.api.schemas import errors
from kenning.core.limits import check_path
from kenning.service import Kenning

router = APIRouter(prefix="/api/ingest", tags=["ingest"])


class GitIngestIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    path: str = Field(..., min_length=1, max_length=4096, description="A folder inside the git work tree (daemon's filesystem).")
    project: str | None = Field(None, max_length=200, description="Project of the memories (default: the repository's folder name).")
    wait: bool = Field(False, description="Ingest inside this request and return the finished run.")


@router.post("/git", status_code=202, responses={200: {"description": "wait: the finished run."}, **errors(409)})
def ingest_git(body: GitIngestIn, response: Response, k: Kenning = Depends(get_kenning)) -> dict:
    check_path("path", body.path)  # before any file-system call: too long is a 400, not ENAMETOOLONG's 500
    if body.wait:
        run = k.git.ingest(body.path, body.project)
        response.status_code = 200
        return run.to_dict()
    return k.git.start(body.path, body.project).to_dict()


@router.get("/git")
def git_repositories(k: Kenning = Depends(get_kenning)) -> dict:
    return {"repositories": k.git.repositories()}


@router.get("/git/{run_id}", responses=errors(404))
def git_run(run_id: str, k: Kenning = Depends(get_kenning)) -> dict:
    return k.git.get(run_id).to_dict()
