"""The `sessions:` section of config.yaml: hook budgets, injection sizes, checkpoints, scoring.

`sessions.ranking` is the one place that says what kenning shows unasked (session start, the
first prompt's merge, step injection): read by `kenning.sessions.ranking`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from kenning.core.events import Harness


RAW_TYPES = ("episode", "episodic", "work_state", "summary", "checkpoint", "commit")
RAW_SOURCES = ("git", "session-episode")


class RankingSettings(BaseModel):
    """What may be shown unasked, and in which order (kenning.sessions.ranking)."""

    model_config = ConfigDict(extra="forbid")

    standing_min_confidence: float = Field(
        0.8, ge=0.0, le=1.0,
        description="A memory is a standing rule on its confidence alone from this confidence up (pinned,"
        " user-verified and memories rated useful are standing whatever their confidence). Above the claim"
        " test's write gate (0.7, core.claims.REVIEW_BELOW): a rule or decision the user stated (0.8-0.85) opens"
        " sessions; an imperative, a recap or an accepted statement (0.68-0.75) waits until it is used.",
    )
    useful_rating: float = Field(
        0.5, ge=-1.0, le=1.0,
        description="An agent rating from this value up confirms a memory (and lets a needs_review memory a query"
        " found be shown unasked).",
    )
    low_rating: float = Field(
        0.2, ge=-1.0, le=1.0, description="An agent rating at or below this value counts against a memory.",
    )
    low_sessions_to_leave: int = Field(
        2, ge=1, le=100,
        description="Sessions rating a memory at or below low_rating (since its last useful rating, review or"
        " pin) after which it leaves session start until new evidence supports it.",
    )
    raw_types: list[str] = Field(
        default_factory=lambda: list(RAW_TYPES),
        description="Types never shown at session start or on a step (raw exchanges, session tasks): a query"
        " finds them (prompts, MCP). A session's task appears once, in the continuity item.",
    )
    raw_sources: list[str] = Field(
        default_factory=lambda: list(RAW_SOURCES),
        description="Sources never shown at session start or on a step (git commits, episodes): a query finds them.",
    )
    continuity: bool = Field(
        True, description="Show one compact item for the project's latest earlier session (its task and outcome).",
    )
    continuity_max_chars: int = Field(
        400, ge=80, le=4000, description="Characters of the continuity item.",
    )
    continuing_limit: int = Field(
        10, ge=0, le=50,
        description="The task in progress (issue 32): session start shows at most this many memories the agent rated"
        " useful (useful_rating) in the project's latest earlier session, as a 'continuing' group after the standing"
        " rules, area rules included (they were used in this task). Low ratings there, or a session on another task"
        " (which rates them nothing), let them go. 0 turns the group off.",
    )
    prompt_min_probability: float = Field(
        0.5, ge=0.0, le=1.0,
        description="A prompt shows a candidate only when its calibrated probability of being needed"
        " (sessions.prompt_bar: a logistic model over the legs' scores and agreement, ratings, what this session"
        " already used, the task in progress; fitted by bench/fit_prompt_bar.py) is at least this. 0 shows every"
        " candidate recall found, up to the limits.",
    )
    prompt_set_probability: float = Field(
        0.95, ge=0.0, le=1.0,
        description="A precise first prompt (a bug report naming code) also shows the smallest top k of its pool"
        " (recall order) whose calibrated chance of holding a needed memory (sessions.prompt_bar.set_probability)"
        " is at least this. 1 turns the set rule off.",
    )
    prompt_set_max: int = Field(
        5, ge=0, le=20, description="The most memories the set rule of a precise first prompt shows (its k).",
    )
    prompt_set_budget_chars: int = Field(
        1800, ge=0, le=100_000, description="Characters session start's memories and the set rule of a precise first"
        " prompt may fill together (the set's members' lines, a member at or above the bar whole; the blocks' headers"
        " and rating request come on top).",
    )
    prompt_set_item_chars: int = Field(
        230, ge=40, le=600, description="A set member below the bar is shown as its first this many characters.",
    )
    prompt_near_copy: float = Field(
        0.95, ge=0.0, le=1.0,
        description="A prompt candidate whose cosine to a memory already shown in this session (or chosen for this"
        " prompt) is at least this is a near-copy and is not shown again.",
    )
    raw_cover_similarity: float = Field(
        0.8, ge=0.0, le=1.0,
        description="A raw exchange (raw_types / raw_sources) competes at a prompt only where nothing distilled covers"
        " it: it is left out when a distilled memory of the pool, or one already shown, is at least this close.",
    )
    predictor_fill: bool = Field(
        True,
        description="Once the predictor has earned influence (alpha < 1), slots left after the standing rules and"
        " the continuity item are filled in its fused order; before that they stay empty.",
    )


class SessionSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ranking: RankingSettings = Field(
        default_factory=RankingSettings,
        description="What session start, the first prompt and step injection show unasked (one ranking home).",
    )

    latency_budget_ms: int = Field(
        250, ge=10, le=60_000,
        description="Hard budget for session-start / user-prompt-submit; optional work is cut, never the answer.",
    )
    prefilter_effective_k: int = Field(
        50, ge=1, le=500, description="Candidates taken by effective_score (scorer seed: top-50)."
    )
    prefilter_similarity_k: int = Field(
        50, ge=0, le=500, description="Candidates taken by embedding similarity to the session context (top-50)."
    )
    max_candidates: int = Field(
        100, ge=1, le=1000, description="Upper bound on the candidate pool whatever the corpus size."
    )
    inject_limit: int = Field(
        12, ge=0, le=200, description="Memories injected at session start, and at most on the first prompt (top-k)."
    )
    inject_budget_chars: int = Field(
        6000, ge=200, le=200_000,
        description="Character budget of a session's opening injection: session-start and the first prompt together.",
    )
    start_budget_chars: int = Field(
        2000, ge=0, le=200_000,
        description="The part of inject_budget_chars session-start may use: the task is known only at the first"
        " prompt, which gets the rest (at least prompt_budget_chars).",
    )
    prompt_inject_limit: int = Field(5, ge=0, le=100, description="New memories injected per prompt.")
    prompt_budget_chars: int = Field(
        3000, ge=200, le=100_000, description="Character budget for one prompt's injection text."
    )
    prompt_predictor_order: bool = Field(
        False,
        description="Inject the first prompt's pool in the predictor's fused order. Off: the pool is still scored"
        " with the prompt as context and recorded for training, and injected in recall order — the predictor's"
        " influence (alpha) is earned on session-start pools, not on prompt pools (bench/coding_memory.py:"
        " decisions injected 1.0 in recall order, 0.83-0.90 in the fused order).",
    )
    agent_feedback: bool = Field(True, description="Ask the agent to rate injected memories (<memory-feedback>).")
    checkpoint_prompt_interval: int = Field(
        10, ge=0, le=10_000, description="Write a checkpoint every N prompts (0 disables)."
    )
    checkpoint_interval_minutes: float = Field(
        15.0, ge=0.0, le=10_000, description="Write a checkpoint when this long has passed since the last (0 disables)."
    )
    checkpoint_max_per_session: int = Field(
        20, ge=1, le=10_000, description="Per-session cap; the oldest checkpoints are dropped beyond it."
    )
    checkpoint_retention_days: float = Field(
        30.0, ge=0.0, description="Checkpoints older than this are purged (0 keeps forever)."
    )
    checkpoint_max_chars: int = Field(20_000, ge=100, le=2_000_000, description="Checkpoint text is cut to this size.")
    transcript_max_chars: int = Field(
        20_000_000, ge=1000, description="Transcripts above this are refused (lossless or not at all)."
    )
    store_raw_transcripts: bool = Field(
        False, description="Keep session transcripts verbatim; by default secrets in them are redacted"
        " ([REDACTED:kind]) before the transcript is stored.",
    )
    summary_max_facts: int = Field(
        12, ge=0, le=200, description="Key facts stored from a transcript when no pipeline is present."
    )
    episodes: bool = Field(
        True, description="At session end the transcript also becomes recallable `episode` memories (raw-first)."
    )
    episode_unit: Literal["exchange", "turn"] = Field(
        "exchange", description="An episode is a user turn with its reply (exchange) or a single turn."
    )
    episode_max_per_session: int = Field(
        200, ge=1, le=10_000, description="Episodes stored per session; the rest stays in the transcript."
    )
    episode_max_chars: int = Field(
        4000, ge=200, le=100_000, description="An episode longer than this is cut (the transcript keeps it whole)."
    )
    llm_judge: bool = Field(
        True, description="Use the configured LLM as continuity judge (falls back to the heuristic)."
    )
    hook_timeout_s: float = Field(
        2.0, gt=0, le=60, description="How long a `kenning hook` command waits for the daemon."
    )
    transcript_roots: list[str] = Field(
        default_factory=list,
        description="Folders besides the harnesses' own (~/.claude/projects, $CODEX_HOME/sessions, ~/.gemini/tmp,"
        " ~/.copilot/session-state)"
        " whose files hooks and the daemon may read as transcripts; any other transcript_path is refused.",
    )
    stale_after_minutes: int = Field(
        120, ge=0, le=100_000,
        description="A session still `active` this long after its last prompt (and its transcript file as long"
        " unchanged) is ended from its transcript at daemon start and at the next session start.",
    )
    idle_end_harnesses: list[Harness] = Field(
        default_factory=lambda: [Harness.CODEX],
        description="Harnesses that never say a session ended (Codex CLI has no session-end event): their"
        " sessions end idle_end_minutes after the last turn instead of stale_after_minutes. Names: claude-code,"
        " codex, gemini, opencode, copilot, generic (core.events.Harness; another name fails when the config loads).",
    )
    idle_end_minutes: float = Field(
        30.0, ge=0, le=100_000,
        description="A session of an idle_end_harnesses harness ends this long after its last turn (its last"
        " prompt, and its transcript file as long unchanged), from that transcript.",
    )
    idle_check_s: float = Field(
        60.0, gt=0, le=86_400,
        description="How often the daemon looks for sessions to end (idle or stale), besides at each session start.",
    )
