"""SessionManager: the one object the service builds for the session lifecycle.

Takes plain dicts (the HTTP contract), validates them and enforces the latency budget; summary
jobs go to the one job queue and its summary worker (`SummaryRunner`). Handlers live in start /
prompt / checkpoints / end; this module only routes, times and records.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from kenning.core.errors import InvalidInput, NotFound
from kenning.core.telemetry import record_latency, timed
from kenning.core.types import Viewer
from kenning.sessions.checkpoints import maybe_checkpoint, write_checkpoint
from kenning.sessions.context import Deadline, SessionDeps, SummaryRunner, require_key, resolve_at
from kenning.sessions.end import EndRequest, compaction_episodes, session_end, summary_outcome
from kenning.sessions.prompt import PromptRequest, apply_feedback, ensure_session, user_prompt_submit
from kenning.sessions.recovery import Recovery
from kenning.sessions.start import StartRequest, session_start
from kenning.sessions import views
from kenning.store import sessions as store

MAX_PROMPT_CHARS = 100_000
MAX_CONTEXT_CHARS = 200_000


def _opt_str(body: dict[str, Any], name: str, limit: int = 4096) -> str | None:
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

    # -- hooks --------------------------------------------------------------------------------
    def session_start(self, body: dict[str, Any], deadline: Deadline | None = None,
                      viewer: Viewer | None = None) -> dict[str, Any]:
        req = StartRequest(viewer=viewer,
            session_key=require_key(body.get("session_key")), harness=_opt_str(body, "harness", 100),
            project=_opt_str(body, "project", 500), cwd=_opt_str(body, "cwd"),
            context=_opt_str(body, "context", MAX_CONTEXT_CHARS), at=resolve_at(body.get("timestamp")),
        )
        deadline = deadline or Deadline(self.deps.settings.latency_budget_ms)
        result = session_start(self.deps, req, deadline)
        record_latency("hook.session_start", deadline.elapsed_ms())
        return asdict(result)

    def user_prompt_submit(self, body: dict[str, Any], deadline: Deadline | None = None,
                           viewer: Viewer | None = None) -> dict[str, Any]:
        prompt = body.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise InvalidInput("prompt must be a non-empty string")
        req = PromptRequest(
            viewer=viewer, session_key=require_key(body.get("session_key")), prompt=prompt[:MAX_PROMPT_CHARS],
            memory_feedback=body.get("memory_feedback"), at=resolve_at(body.get("timestamp")),
        )
        deadline = deadline or Deadline(self.deps.settings.latency_budget_ms)
        result = user_prompt_submit(self.deps, req, deadline)
        record_latency("hook.user_prompt_submit", deadline.elapsed_ms())
        return asdict(result)

    def feedback(self, body: dict[str, Any], viewer: Viewer | None = None) -> dict[str, Any]:
        """Ratings for the session's memories; a team server's user rates only in their own
        session, and only memories that were shown to them."""
        key = require_key(body.get("session_key"))
        self.recovery.check_owner(key, viewer)
        team_user = viewer is not None and not viewer.sees_all
        applied, ignored = apply_feedback(self.deps, key, body.get("memory_feedback"), shown_only=team_user)
        return {"applied": applied, "ignored": ignored}

    def feedback_any_session(self, scores: dict[str, float], session_key: str | None = None,
                             viewer: Viewer | None = None) -> dict[str, Any]:
        """Feedback from a client that cannot know the session key (MCP): it goes to the latest
        session that was offered those memories (open sessions first; on a team server the
        caller's own sessions that showed them)."""
        owner = viewer.user if viewer is not None and not viewer.sees_all else None
        key = session_key or store.latest_session_offering(self.deps.db.reader(), list(scores), owner=owner)
        if key is None:
            return {"applied": 0, "ignored": len(scores), "session_key": None}
        return {**self.feedback({"session_key": key, "memory_feedback": scores}, viewer), "session_key": key}

    def checkpoint(self, body: dict[str, Any], trigger: str = "manual") -> dict[str, Any]:
        key = require_key(body.get("session_key"))
        at = resolve_at(body.get("timestamp"))
        kind, trigger = trigger, _opt_str(body, "trigger", 50) or trigger  # the harness's trigger is recorded
        ensure_session(self.deps, key, at)
        checkpoint_id = write_checkpoint(
            self.deps, key, at, trigger=trigger, context=_opt_str(body, "context", MAX_CONTEXT_CHARS)
        )
        if kind == "pre-compaction" and body.get("transcript") is not None:
            episodes = compaction_episodes(self.deps, key, body["transcript"], at)
            return {"checkpoint_id": checkpoint_id, "episodes": episodes}
        return {"checkpoint_id": checkpoint_id}

    def post_tool_use(self, body: dict[str, Any]) -> dict[str, Any]:
        """A tool step: the tick that lets time-based checkpoints happen between prompts."""
        key = require_key(body.get("session_key"))
        at = resolve_at(body.get("timestamp"))
        if store.get_session(self.deps.db.reader(), key) is None:
            return {"checkpoint_id": None}
        return {"checkpoint_id": maybe_checkpoint(self.deps, key, at, trigger="interval")}

    def session_end(self, body: dict[str, Any]) -> dict[str, Any]:
        with timed("hook.session_end"):
            return self._session_end(body)

    def _session_end(self, body: dict[str, Any]) -> dict[str, Any]:
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
    def list(self, *, limit: int = 50, offset: int = 0, project: str | None = None) -> dict[str, Any]:
        return views.session_list(self.deps.db.reader(), limit=limit, offset=offset, project=project)

    def detail(self, session_key: str) -> dict[str, Any]:
        return views.session_detail(self.deps.db.reader(), session_key)

    def transcript(self, session_key: str) -> str:
        row = store.get_transcript(self.deps.db.reader(), session_key)
        if row is None:
            raise NotFound(f"no transcript for session {session_key!r}")
        return row.transcript
