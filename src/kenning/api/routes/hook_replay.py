"""/api/hooks/replay: a hook hands over one event from its own spool (issue 26 follow-up).

A laptop whose hooks talk to a daemon elsewhere (KENNING_URL, a team server) spools what that
daemon did not take into its own `$KENNING_HOME/spool/`, which no daemon there replays. When a
hook reaches the daemon again it flushes the spool, oldest first, through this route
(hooks/spool.flush). Each event carries its spool name, the same id the daemon's own replay
records (`spool_replayed`, m027): an event applied once is answered `duplicate` and stores nothing
twice. When the daemon finds the name in its own spool it answers `local` (it replays it itself).
The transcript of a session end comes in the body, read by the hook through its confined reader;
no path from the hook is ever read here. The inner body is checked by the hook route's own model.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from kenning.api.deps import get_kenning, get_viewer
from kenning.api.errors import describe_validation
from kenning.api.guard import USER_ROUTES
from kenning.api.routes.hooks import (
    CheckpointIn, FeedbackIn, HookBody, HookRoute, SessionEndIn, SessionKey, UserPromptIn,
)
from kenning.api.schemas import IsoTime, errors
from kenning.api.session_guard import note_refusal
from kenning.core.errors import Forbidden, InvalidInput
from kenning.core.events import SessionStarted, event_to_dict
from kenning.core.types import Viewer
from kenning.hookservice import TOOL_STEP_BODY, ToolStepBody
from kenning.service import Kenning

router = APIRouter(prefix="/api/hooks", tags=["hooks"], route_class=HookRoute, responses=errors(400))

MODELS: dict[str, type[HookBody] | type[SessionStarted] | type[ToolStepBody]] = {
    "/api/hooks/session-start": SessionStarted,  # (its body is the event: core.events)
    "/api/hooks/user-prompt-submit": UserPromptIn,
    "/api/hooks/post-tool-use": ToolStepBody,  # (its body in the harness's shape: hookservice)
    "/api/hooks/feedback": FeedbackIn,
    "/api/hooks/pre-compaction": CheckpointIn,
    "/api/hooks/session-end": SessionEndIn,
}


def _read(model: type[HookBody] | type[SessionStarted] | type[ToolStepBody],
          body: dict[str, object]) -> dict[str, object]:
    """A spooled body checked by its route's own declaration, as the replay applies it (nulls left out)."""
    if model is ToolStepBody:  # kept in the harness's shape: the replay reads it as the route does (ToolStep)
        return {name: value for name, value in TOOL_STEP_BODY.validate_python(body).items() if value is not None}
    if issubclass(model, BaseModel):
        return model.model_validate(body).as_dict()
    data = event_to_dict(TypeAdapter(SessionStarted).validate_python(body))  # a body read straight into its event
    data.pop("kind", None)
    return data


class ReplayIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    session_key: SessionKey = Field(description="The event's session (ownership is checked on it).")
    event: Annotated[str, Field(min_length=3, max_length=200, pattern=r"^e-[0-9A-Za-z._-]+$")] = Field(
        description="The event's spool name: its id, applied once.")
    path: Literal[tuple(MODELS)] = Field(description="The hook route the event was meant for.")  # type: ignore[valid-type]
    body: dict[str, object] = Field(description="The request body the hook would have sent.")
    spooled_at: IsoTime | None = Field(None, description="When it was spooled: the event's time if the body has none.")
    transcript: str | None = Field(None, description="A session end's or compaction's transcript, read by the hook.")
    transcript_refused: str | None = Field(None, max_length=50, description="Why the hook did not read it.")


class ReplayOut(BaseModel):
    status: str = Field(description="done | duplicate | local (this daemon's own spool: it replays it itself)")


@router.post("/replay", response_model=ReplayOut)
def replay(payload: ReplayIn, request: Request, k: Kenning = Depends(get_kenning),
           viewer: Viewer = Depends(get_viewer)) -> dict:
    model = MODELS[payload.path]
    if not viewer.sees_all and not payload.path.startswith(USER_ROUTES):
        raise Forbidden(f"{payload.path} is not open to user tokens")
    try:
        data = _read(model, payload.body)
    except ValidationError as exc:
        raise InvalidInput(f"body: {describe_validation(exc)}") from exc
    if (data.get("session_key") or data.get("session_id")) != payload.session_key:
        raise InvalidInput("body.session_key must be the event's session_key")
    data.setdefault("session_key", payload.session_key)
    note_refusal(payload.transcript_refused)
    replayer = request.app.state.replayer
    spooled_at = payload.model_dump(mode="json")["spooled_at"]
    status = replayer.from_hook(payload.event, payload.path, data, payload.transcript, spooled_at, viewer)
    return {"status": status}
