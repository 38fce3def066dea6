"""SessionManager: the one object the service builds for the session lifecycle.

It takes the typed events of core.events (`SessionStarted`, `PromptSubmitted`, `ToolResult`, `Compacted`,
`SessionEnded`: made and checked at the edge that read the caller's JSON — the hook routes, the spool replay —
so nothing here re-validates a dict); feedback takes the session key (its owner checked by the hooks service)
and the ratings as sent. It enforces the
latency budget; answers are TypedDicts (StartAnswer, PromptAnswer, EndAnswer, …); summary jobs go to the one job
queue and its summary worker (`SummaryRunner`). Handlers live in start / prompt / checkpoints / end; this
module only routes, times and records.
"""

from __future__ import annotations

from typing import NotRequired

from typing_extensions import TypedDict  # pydantic reads it (a hook route's response model) on Python 3.11

from kenning.core.errors import InvalidInput, NotFound
from kenning.core.events import Compacted, Harness, PromptSubmitted, SessionEnded, SessionStarted, ToolResult
from kenning.core.telemetry import record_latency, timed
from kenning.core.types import Viewer
from kenning.sessions.checkpoints import maybe_checkpoint, write_checkpoint
from kenning.sessions.context import Deadline, SessionDeps, SummaryRunner, resolve_at
from kenning.sessions.end import EndAnswer, EndRequest, compaction_episodes, session_end, summary_outcome
from kenning.sessions.episodes import EpisodesResult
from kenning.sessions.mcp_clients import McpClients
from kenning.sessions.prompt import PromptAnswer, PromptRequest, apply_feedback, ensure_session, user_prompt_submit
from kenning.sessions.recovery import Recovery
from kenning.sessions.start import StartAnswer, session_start
from kenning.sessions.transcript import turns_as_jsonl
from kenning.sessions import views
from kenning.store import sessions as store

MAX_PROMPT_CHARS = 100_000
MAX_CONTEXT_CHARS = 200_000


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
    """The checkpoint written (absent: none was due); at pre-compaction with a transcript, its episodes."""
    checkpoint_id: NotRequired[int]
    episodes: NotRequired[EpisodesResult]


class SessionManager:
    def __init__(self, deps: SessionDeps, summaries: SummaryRunner) -> None:
        self.deps = deps
        self.summaries = summaries
        self.recovery = Recovery(deps)  # missed ends (spool replay, stale sessions) and team ownership
        self.mcp = McpClients()  # where kenning's MCP server is connected: prompts ask to rate through it

    # -- hooks --------------------------------------------------------------------------------
    def session_start(self, event: SessionStarted, deadline: Deadline | None = None,
                      viewer: Viewer | None = None) -> StartAnswer:
        """The event as the route read it (no copy), with what the daemon adds: its time (`resolve_at`: the event's
        timestamp, else the daemon's clock) and the viewer (a team server's user)."""
        at = resolve_at(event.timestamp)
        deadline = deadline or Deadline(self.deps.settings.latency_budget_ms)
        answer = session_start(self.deps, event, at, viewer, deadline)
        record_latency("hook.session_start", deadline.elapsed_ms())
        return answer

    def user_prompt_submit(self, event: PromptSubmitted, deadline: Deadline | None = None,
                           viewer: Viewer | None = None) -> PromptAnswer:
        if not event.prompt.strip():
            raise InvalidInput("prompt must be a non-empty string")
        # where the session runs, when the prompt says (Copilot CLI's may reach the daemon before session start)
        harness = event.harness.value if event.harness != Harness.GENERIC else None
        req = PromptRequest(
            viewer=viewer, session_key=event.session_key, prompt=event.prompt[:MAX_PROMPT_CHARS],
            memory_feedback=event.memory_feedback or None, at=resolve_at(event.timestamp), mcp=self.mcp,
            harness=_short(harness, 100), project=_short(event.project, 500), cwd=_short(event.cwd, 4096),
        )
        deadline = deadline or Deadline(self.deps.settings.latency_budget_ms)
        answer = user_prompt_submit(self.deps, req, deadline)
        record_latency("hook.user_prompt_submit", deadline.elapsed_ms())
        return answer

    def feedback(self, key: str, scores: object, *, shown_only: bool = False) -> FeedbackAnswer:
        """Ratings for the session's memories (`scores`: the caller's JSON, {memory id: score}; the bad ones
        are counted as ignored). `key` is one the caller may rate in: its owner was checked once, by the hooks
        service (`HooksService.feedback`, issue 34); `shown_only` (a team server's user): only memories that were
        shown in the session count."""
        applied, ignored = apply_feedback(self.deps, key, scores, shown_only=shown_only)
        return {"applied": applied, "ignored": ignored}

    def session_offering(self, memory_ids: list[str], owner: str | None = None) -> str | None:
        """The latest session that was offered these memories (open sessions first; `owner`: only that user's)."""
        return store.latest_session_offering(self.deps.db.reader(), memory_ids, owner=owner)

    def checkpoint(self, event: Compacted) -> CheckpointAnswer:
        """A checkpoint with the harness's trigger; a compaction's transcript (when the event carries one)
        has its episodes stored now."""
        key, at = event.session_key, resolve_at(event.timestamp)
        ensure_session(self.deps, key, at)
        checkpoint_id = write_checkpoint(self.deps, key, at, trigger=event.trigger, context=event.context)
        if event.transcript is not None:
            episodes = compaction_episodes(self.deps, key, event.transcript, at)
            return {"checkpoint_id": checkpoint_id, "episodes": episodes}
        return {"checkpoint_id": checkpoint_id}

    def post_tool_use(self, event: ToolResult) -> CheckpointAnswer:
        """A tool step: the tick that lets time-based checkpoints happen between prompts."""
        at = resolve_at(event.timestamp)
        if store.get_session(self.deps.db.reader(), event.session_key) is None:
            return {}
        checkpoint_id = maybe_checkpoint(self.deps, event.session_key, at, trigger="interval")
        return {} if checkpoint_id is None else {"checkpoint_id": checkpoint_id}

    def session_end(self, event: SessionEnded, *, wait: bool = False) -> EndAnswer:
        """Store the transcript (the event's, else the turns its adapter read) and queue the summary job;
        with `wait`, summarise now and answer the summary."""
        with timed("hook.session_end"):
            transcript = event.transcript if event.transcript is not None else (
                turns_as_jsonl(event.turns) if event.turns else None)
            req = EndRequest(event.session_key, transcript, resolve_at(event.timestamp))
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
