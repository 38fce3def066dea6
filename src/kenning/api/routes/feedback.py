"""/api/feedback: rate memories without knowing the session key (MCP clients, tools).

`kenning mcp` also registers here the directory it serves (POST /api/feedback/clients, DELETE when
it exits): prompts of sessions in that directory ask the agent to rate through the MCP tool instead
of the `<memory-feedback>` tag (sessions.mcp_clients).

Hooks know their session (`POST /api/hooks/feedback`); an MCP client does not. Here the
session key is optional: without it the ratings go to the latest session that was offered
those memories (open sessions first). Ratings for memories no session was offered are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from kenning.api.deps import get_kenning, get_viewer
from kenning.api.schemas import SessionKey
from kenning.core.types import Viewer
from kenning.service import Kenning

router = APIRouter(prefix="/api/feedback", tags=["sessions"])


class FeedbackIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    scores: dict[str, float] = Field(
        ..., max_length=200, description="memory id → score in -1 (harmful) .. 1 (directly useful).")
    session_key: SessionKey | None = Field(
        None,
        description="The session the memories were offered in; omitted: the latest session that was offered them.")


class FeedbackOut(BaseModel):
    applied: int
    ignored: int
    session_key: str | None = Field(None, description="The session the ratings went to (null: none was found).")


@router.post("", response_model=FeedbackOut)
async def feedback(body: FeedbackIn, k: Kenning = Depends(get_kenning),
                   viewer: Viewer = Depends(get_viewer)) -> Mapping[str, object]:
    return await run_in_threadpool(k.hooks.feedback_any_session, body.scores, body.session_key, viewer)


class McpClientIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    cwd: str = Field(..., min_length=1, max_length=4096, description="The directory the MCP server was started in.")


class McpClientOut(BaseModel):
    token: str = Field(..., description="Pass to DELETE /api/feedback/clients/{token} when the server exits.")


@router.post("/clients", response_model=McpClientOut)
async def mcp_client_connected(body: McpClientIn, k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:
    return {"token": k.sessions.mcp.register(body.cwd)}


class McpClientsOut(BaseModel):
    directories: list[str] = Field(..., description="Where a kenning MCP server is connected now.")


@router.get("/clients", response_model=McpClientsOut)
async def mcp_clients(k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:
    return {"directories": k.sessions.mcp.directories()}


@router.delete("/clients/{token}")
async def mcp_client_gone(token: str, k: Kenning = Depends(get_kenning)) -> Mapping[str, object]:
    return {"removed": k.sessions.mcp.unregister(token)}
