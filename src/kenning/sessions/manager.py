"""SessionManager: the one object the service builds for the session lifecycle.

Takes plain dicts (the HTTP contract: the caller's JSON, untrusted, read as `Body`), validates them
and enforces the latency budget; answers are TypedDicts (StartAnswer, PromptAnswer, EndAnswer, …); summary
jobs go to the one job queue and its summary worker (`SummaryRunner`). Handlers live in start /
prompt / checkpoints / end; this module only routes, times and records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NotRequired, TypedDict

from kenning.core.errors import InvalidInput, NotFound
from kenning.core.telemetry import record_latency, timed
from kenning.core.types import Viewer
from kenning.sessions.checkpoints import maybe_checkpoint, write_checkpoint
from kenning.sessions.context import Deadline, SessionDeps, SummaryRunner, require_key, resolve_at
from kenning.sessions.end import EndAnswer, EndRequest, compaction_episodes, session_end, summary_outcome
from kenning.sessions.episodes import EpisodesResult
from kenning.sessions.mcp_clients import McpClients
from kenning.sessions.prompt import PromptAnswer, PromptRequest, apply_feedback, ensure_session, user_prompt_submit
from kenning.sessions.recovery import Recovery
from kenning.sessions.start import StartAnswer, StartRequest, session_start
from kenning.sessions import views
from kenning.store import sessions as store

MAX_PROMPT_CHARS = 100_000
MAX_CONTEXT_CHARS = 200_000

Body = Mapping[str, object]  # a hook's or an API caller's JSON object: every value is checked before use


def _short(value: object, limit: int) -> str | None:
    """A prompt body's optional harness / project / cwd: a string within `limit`, else None."""
    return value if isinstance(value, str) and 0 < len(value) <= limit else None


class FeedbackAnswer(TypedDict):
    """Ratings applied and ignored (ids the session never saw, bad scores)."""
    applied: int
    ignored: int


class SessionFeedbackAnswer(FeedbackAnswer):
    """Feedback from a client that does not know the session key: the session it went to (None: none)."""
    session_key: str | None


class CheckpointAnswer(TypedDict):
    """The checkpoint written (None: none was due); at pre-compaction with a transcript, its episodes."""
    checkpoint_id: int | None
    episodes: NotRequired[EpisodesResult]


def _opt_str(body: Body, name: str, limit: int = 4096) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string")
    if len(value) > limit:
        raise InvalidInput(f"{name} is longer than {limit} characters")
    return value


class SessionManager:
    def __init__(self, deps: SessionDeps, summaries: SummaryRunner) -> None:
        self.deps = deps
        self.summaries = summaries
        self.recovery = Recovery(deps)  # missed ends (spool replay, stale sessions) and team ownership
        self.mcp = McpClients()  # where kenning's MCP server is connected: prompts ask to rate through it

    # -- hooks --------------------------------------------------------------------------------
    def session_start(self, body: Body, deadline: Deadline | None = None,
                      viewer: Viewer | None = None) -> StartAnswer:
        req = StartRequest(viewer=viewer,
            session_key=require_key(body.get("session_key")), harness=_opt_str(body, "harness", 100),
            project=_opt_str(body, "project", 500), cwd=_opt_str(body, "cwd"),
            context=_opt_str(body, "context", MAX_CONTEXT_CHARS), at=resolve_at(body.get("timestamp")),
        )
        deadline = deadline or Deadline(self.deps.settings.latency_budget_ms)
        result = session_start(self.deps, req, deadline)
        record_latency("hook.session_start", deadline.elapsed_ms())
        return result.answer()

    def user_prompt_submit(self, body: Body, deadline: Deadline | None = None,
                           viewer: Viewer | None = None) -> PromptAnswer:
        prompt = body.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise InvalidInput("prompt must be a non-empty string")
        req = PromptRequest(
            viewer=viewer, session_key=require_key(body.get("session_key")), prompt=prompt[:MAX_PROMPT_CHARS],
            memory_feedback=body.get("memory_feedback"), at=resolve_at(body.get("timestamp")), mcp=self.mcp,
            harness=_short(body.get("harness"), 100), project=_short(body.get("project"), 500),
            cwd=_short(body.get("cwd"), 4096),
        )
        deadline = deadline or Deadline(self.deps.settings.latency_budget_ms)
        result = user_prompt_submit(self.deps, req, deadline)
        record_latency("hook.user_prompt_submit", deadline.elapsed_ms())
        return result.answer()

    def feedback(self, body: Body, viewer: Viewer | None = None) -> FeedbackAnswer:
        """Ratings for the session's memories; a team server's user rates only in their own
        session, and only memories that were shown to them."""
        key = require_key(body.get("session_key"))
        self.recovery.check_owner(key, viewer)
        team_user = viewer is not None and not viewer.sees_all
        applied, ignored = apply_feedback(self.deps, key, body.get("memory_feedback"), shown_only=team_user)
        return {"applied": applied, "ignored": ignored}

    def feedback_any_session(self, scores: dict[str, float], session_key: str | None = None,
                             viewer: Viewer | None = None) -> SessionFeedbackAnswer:
        """Feedback from a client that cannot know the session key (MCP): it goes to the latest
        session that was offered those memories (open sessions first; on a team server the
        caller's own sessions that showed them)."""
        owner = viewer.user if viewer is not None and not viewer.sees_all else None
        key = session_key or store.latest_session_offering(self.deps.db.reader(), list(scores), owner=owner)
        if key is None:
            return {"applied": 0, "ignored": len(scores), "session_key": None}
        fed = self.feedback({"session_key": key, "memory_feedback": scores}, viewer)
        return {"applied": fed["applied"], "ignored": fed["ignored"], "session_key": key}

    def checkpoint(self, body: Body, trigger: str = "manual") -> CheckpointAnswer:
        key = require_key(body.get("session_key"))
        at = resolve_at(body.get("timestamp"))
        kind, trigger = trigger, _opt_str(body, "trigger", 50) or trigger  # the harness's trigger is recorded
        ensure_session(self.deps, key, at)
        checkpoint_id = write_checkpoint(
            self.deps, key, at, trigger=trigger, context=_opt_str(body, "context", MAX_CONTEXT_CHARS)
        )
        transcript = body.get("transcript")
        if kind == "pre-compaction" and transcript is not None:
            episodes = compaction_episodes(self.deps, key, transcript, at)
            return {"checkpoint_id": checkpoint_id, "episodes": episodes}
        return {"checkpoint_id": checkpoint_id}

    def post_tool_use(self, body: Body) -> CheckpointAnswer:
        """A tool step: the tick that lets time-based checkpoints happen between prompts."""
        key = require_key(body.get("session_key"))
        at = resolve_at(body.get("timestamp"))
        if store.get_session(self.deps.db.reader(), key) is None:
            return {"checkpoint_id": None}
        return {"checkpoint_id": maybe_checkpoint(self.deps, key, at, trigger="interval")}

    def session_end(self, body: Body) -> EndAnswer:
        with timed("hook.session_end"):
            return self._session_end(body)

    def _session_end(self, body: Body) -> EndAnswer:
        key = require_key(body.get("session_key"))
        transcript = body.get("transcript")
        if transcript is not None and not isinstance(transcript, str):
            raise InvalidInput("transcript must be a string")
        wait = body.get("wait", False)
        if not isinstance(wait, bool):
            raise InvalidInput("wait must be true or false")
        req = EndRequest(key, transcript, resolve_at(body.get("timestamp")))
        if not wait:
            ended = session_end(self.deps, req)
            self.summaries.wake()
            return {"queued": True, "job_id": ended.job_id}
        ended = session_end(self.deps, req, lease_for=self.summaries.worker_id)
        if ended.leased is None:  # the worker is running this session's job right now: it finishes it
            return {"queued": True, "job_id": ended.job_id, "summary": None}
        summary = summary_outcome(self.summaries.run_leased(ended.leased))
        return {"queued": False, "job_id": ended.job_id, "summary": summary}

    # -- reading ---------------------------------------------------------------------------------
    def list(self, *, limit: int = 50, offset: int = 0, project: str | None = None) -> views.SessionList:
        return views.session_list(self.deps.db.reader(), limit=limit, offset=offset, project=project)

    def detail(self, session_key: str) -> views.SessionDetail:
        return views.session_detail(self.deps.db.reader(), session_key)

    def transcript(self, session_key: str) -> str:
        row = store.get_transcript(self.deps.db.reader(), session_key)
        if row is None:
            raise NotFound(f"no transcript for session {session_key!r}")
        return row.transcript
