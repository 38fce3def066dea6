"""session-end: keep the transcript losslessly, then the summary job (extract + continuity).

The summary job (job type `session_summary` in the one job queue, memory_jobs: one live job
per session, leased, retried with backoff, dead after the worker's max attempts) runs right
after the answer in the summary worker (kenning.workers.summaries), or in the request when the
caller asks to wait: it extracts memories from the transcript — through the pipeline when
the service wired one in, otherwise as key facts stored with source='session-summary' —
then scores continuity (LLM judge when configured, else the heuristic), writes each
memory's `relevance_score` and the `session_scores` row in one transaction, and tells the
predictor the session is over. No LLM or embedding call ever runs inside a write tx.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired, Required, cast

from typing_extensions import TypedDict  # pydantic reads EndAnswer (the session-end route's answer) on Python 3.11

from kenning.core.clock import now_iso
from kenning.core.errors import InvalidInput
from kenning.core.telemetry import log_event, record_error
from kenning.sessions.continuity import ContinuityResult, heuristic_judge, llm_judge
from kenning.sessions.context import SessionDeps, bare_session
from kenning.sessions.episodes import EpisodesResult, store_episodes, turn_positions
from kenning.sessions.overlay import Extraction, store_key_facts
from kenning.core.secrets import redact
from kenning.sessions.transcript import Turn, parse_transcript
from kenning.store import sessions as store
from kenning.store.jobs import Job
from kenning.store.sessions import ContinuityVerdict, SessionMemoryRow, SessionPrompt, SessionRow


@dataclass
class EndRequest:
    session_key: str
    transcript: str | None = None
    at: str = ""


class SummaryResult(TypedDict):
    """What the summary job did for one session (summarize(); the job's stored result)."""
    episodes: EpisodesResult  # without `ids`
    extraction: Extraction
    score: ContinuityVerdict
    scored_memories: int


class _StoredSummary(TypedDict, total=False):
    """A summary job's stored result: SummaryResult's keys, read back from JSON."""
    episodes: EpisodesResult
    extraction: Extraction
    score: ContinuityVerdict
    scored_memories: int


class SummaryOutcome(_StoredSummary, total=False):
    """A waiting session end's `summary`: status "done" with the job's result (SummaryResult's keys);
    else "running" / "failed" with the error, the job's status and its attempts."""
    session_key: Required[str | None]  # the job's session (its payload's, else its dedup key)
    status: Required[str]
    error: str | None
    job_status: str
    attempts: int


if TYPE_CHECKING:
    SummaryField = SummaryOutcome | None
else:  # what pydantic reads (the hook route's response model): the summary as the JSON object the job wrote,
    # passed on key for key in its order. Validated against the TypedDicts above it would come out in their
    # declaration order (ContinuityVerdict's `judge` before `reasoning`) and lose any key they do not declare.
    SummaryField = dict[str, object] | None


class EndAnswer(TypedDict):
    """What session end answers — the one declaration of its sessions part (issue 34): SessionManager.session_end
    returns it, the hooks service adds the observer's promotion (hookservice.SessionEndAnswer), the hook route
    serialises that as its response_model (with its own degraded / error). The job queued, or, when the
    caller waited, its summary (None: another worker is running it now)."""
    queued: bool
    job_id: int
    summary: NotRequired[SummaryField]


@dataclass
class Ended:
    job_id: int
    leased: Job | None  # the job, leased for the caller that waits on it (None: not asked, or held elsewhere)


def session_end(deps: SessionDeps, req: EndRequest, *, lease_for: str | None = None) -> Ended:
    """Store the transcript and queue the summary job; with `lease_for` (a worker id) the job is
    leased in the same transaction, so that caller runs it and no background worker takes it."""
    if req.transcript is not None:
        check_transcript(deps, req.transcript)
    with deps.db.with_write_tx() as conn:
        if store.get_session(conn, req.session_key) is None:
            store.create_session(conn, req.session_key, harness=None, project=None, cwd=None, context=None,
                                 started_at=req.at)
        if req.transcript:
            kept = req.transcript if deps.settings.store_raw_transcripts else redact(req.transcript)
            store.save_transcript(conn, req.session_key, kept, req.at)
        store.end_session(conn, req.session_key, req.at)
        job_id = store.enqueue_summary_job(conn, req.session_key)
        leased = store.lease_summary_job(conn, req.session_key, lease_for) if lease_for else None
        return Ended(job_id, leased)


def check_transcript(deps: SessionDeps, transcript: object) -> str:
    """The caller's transcript (its JSON value) when it is a string within the limit; else InvalidInput."""
    if not isinstance(transcript, str):
        raise InvalidInput("transcript must be a string")
    if len(transcript) > deps.settings.transcript_max_chars:
        raise InvalidInput(f"transcript is {len(transcript)} characters; the limit is {deps.settings.transcript_max_chars}")
    return transcript


def compaction_episodes(deps: SessionDeps, session_key: str, transcript: object, at: str) -> EpisodesResult:
    """Pre-compaction: keep the transcript so far and store its episodes now (a long session's
    early exchanges would otherwise wait for session end); session end adds only the rest.
    `transcript`: the caller's JSON value (checked here)."""
    transcript = check_transcript(deps, transcript)
    with deps.db.with_write_tx() as conn:
        kept = transcript if deps.settings.store_raw_transcripts else redact(transcript)
        store.save_transcript(conn, session_key, kept, at)
    session = store.get_session(deps.db.reader(), session_key) or bare_session(session_key)
    result = store_episodes(deps, session, parse_transcript(transcript), at)
    result.pop("ids", None)
    return result


def _extract(deps: SessionDeps, session: SessionRow, transcript: str, turns: list[Turn],
             prompts: list[SessionPrompt], at: str, episode_ids: dict[int, str]) -> Extraction:
    if deps.remember is None:
        return {"via": "none", "stored": []}
    positions = turn_positions(turns, deps.settings.episode_unit)
    return store_key_facts(deps, session, turns, [p["prompt"] for p in prompts], positions, episode_ids, at)


def _judge(deps: SessionDeps, rows: list[SessionMemoryRow], turns: list[Turn],
           prompts: list[SessionPrompt]) -> ContinuityResult:
    if deps.generate is not None and deps.settings.llm_judge and any(r.get("was_injected") for r in rows):
        try:
            return llm_judge(deps.generate, rows, turns, prompts)
        except Exception as exc:  # an LLM failure falls back to the transparent heuristic
            record_error("sessions", f"LLM continuity judge failed, heuristic used: {exc}")
    return heuristic_judge(rows, turns, prompts)


def summary_outcome(job: Job) -> SummaryOutcome:
    """What a synchronous session-end answers for its job once run: the summary when done, else
    the error and whether the job will be retried (pending), is dead, or runs elsewhere (leased)."""
    key = job.payload.get("session_key") or job.dedup_key
    if job.status == "completed":
        # the job's stored result (what summarize() returned, read back from JSON) after the key and status
        return cast(SummaryOutcome, {"session_key": key, "status": "done", **(job.result or {})})
    # leased: the run outlived its lease, the reaper requeued it and a worker runs it again now
    status = "running" if job.status == "leased" else "failed"
    return {"session_key": key, "status": status, "error": job.last_error, "job_status": job.status,
            "attempts": job.attempts}


def summarize(deps: SessionDeps, key: str) -> SummaryResult:
    """The summary job's work for one session; raises on failure (the queue retries it)."""
    conn = deps.db.reader()
    session = store.get_session(conn, key) or bare_session(key)
    at = session.get("ended_at") or now_iso()
    transcript_row = store.get_transcript(conn, key)
    transcript = transcript_row.transcript if transcript_row else ""
    turns = parse_transcript(transcript)
    prompts = store.session_prompts(conn, key)
    episodes = store_episodes(deps, session, turns, at)
    extraction: Extraction = (_extract(deps, session, transcript, turns, prompts, at, episodes["ids"]) if (transcript or prompts)
                  else {"via": "skipped"})
    rows = store.session_memories(deps.db.reader(), key)
    verdict = _judge(deps, rows, turns, prompts)
    with deps.db.with_write_tx() as wconn:
        store.set_relevance_scores(wconn, key, verdict.per_memory)
        store.upsert_session_score(wconn, key, verdict.as_row(session.get("project")), at)
    predictor = deps.predictor
    if predictor is not None:
        try:
            predictor.on_session_end(key)
        except Exception as exc:  # training is the predictor's business; scoring is done
            record_error("sessions", f"predictor.on_session_end failed: {exc}", session_key=key)
    score = verdict.as_row(session.get("project"))
    episodes.pop("ids", None)
    log_event("sessions", "summary done", session_key=key, score=score["score"])
    return {"episodes": episodes, "extraction": extraction, "score": score,
            "scored_memories": len(verdict.per_memory)}
