"""The `observer:` section of config.yaml: event intake caps, promotion, step injection, lifecycle."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_HALF_LIVES = {
    "work_state": 7.0, "e2e_observation": 30.0, "error_pattern": 60.0, "gotcha": 60.0,
    "module_insight": 90.0, "dead_end": 90.0, "causal_dependency": 120.0, "workflow_recipe": 120.0,
    "prefetch_pattern": 90.0, "task_calibration": 180.0,
}
DEFAULT_PROMOTION_CAPS = {
    "build": 20, "insights": 5, "roadmap": 3, "terminal": 3, "changelog": 0, "spec_creation": 3, "pr_review": 8,
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LifecycleSettings(_Strict):
    enabled: bool = Field(True, description="Run the daily pruning / trust-promotion job (v4 section 18).")
    interval_hours: float = Field(24.0, gt=0, le=24 * 30, description="Hours between pruning runs.")
    half_lives_days: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_HALF_LIVES),
        description="Confidence half-life per memory type in days; a type not listed (decision, fact…) never decays.",
    )
    soft_delete_after_half_lives: float = Field(
        3.0, gt=0, le=100, description="Soft-delete a memory unused for this many half-lives (pinned/verified kept).",
    )
    hard_delete_after_days: float = Field(
        30.0, ge=0, le=3650,
        description="Hard-delete a pruned memory this many days after its soft delete, unless user-verified or pinned.",
    )
    trust_access_count: int = Field(5, ge=1, description="Accesses without correction before confidence +0.05.")
    trust_confidence_step: float = Field(0.05, ge=0, le=0.5, description="Confidence added at each trust promotion.")
    trust_confidence_cap: float = Field(0.95, ge=0, le=1, description="Trust promotion never raises confidence past this.")
    review_clear_access_count: int = Field(10, ge=1, description="Accesses without correction that clear needs_review.")
    batch_limit: int = Field(1000, ge=1, le=100_000, description="Rows touched per pruning step.")


class ABSettings(_Strict):
    enabled: bool = Field(
        False, description="Assign sessions to memory A/B groups (v4 section 19); off ⇒ every session is 'full'.",
    )
    control_percent: int = Field(5, ge=0, le=100, description="Sessions with no step injection (control).")
    passive_percent: int = Field(10, ge=0, le=100, description="Sessions with start/prompt injection only (passive).")


class ObserverSettings(_Strict):
    enabled: bool = Field(True, description="Observe tool events and promote what recurs (SPEC S8).")
    max_sessions: int = Field(256, ge=1, le=100_000, description="Scratchpads held in memory (least recent evicted to the checkpoint).")
    max_files: int = Field(400, ge=10, le=100_000, description="Files tracked per session scratchpad.")
    max_patterns: int = Field(200, ge=10, le=100_000, description="Grep/Glob patterns tracked per session.")
    max_errors: int = Field(100, ge=1, le=10_000, description="Error fingerprints tracked per session.")
    max_signals_per_class: int = Field(50, ge=1, le=10_000, description="Signals kept per class per session (low value evicted).")
    checkpoint_interval_s: float = Field(
        30.0, ge=0.2, le=3600, description="Seconds between scratchpad checkpoints; a restart loses at most this.",
    )
    default_session_type: str = Field(
        "", description="Session type for promotion caps; '' derives it (edits ⇒ build, otherwise insights).",
    )
    promotion_caps: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_PROMOTION_CAPS), description="Memories promoted per session by session type.",
    )
    min_sessions: dict[str, int] = Field(
        default_factory=dict, description="Override the seed's minimum sessions per signal class.",
    )
    novelty_threshold: float = Field(
        0.88, ge=0, le=1, description="Cosine above which a candidate reinforces an existing memory instead.",
    )
    trust_penalty: float = Field(0.7, ge=0, le=1, description="Confidence factor for candidates derived after WebFetch/WebSearch.")
    synthesis_thresholds: list[int] = Field(
        default_factory=lambda: [5, 10, 20, 50, 100],
        description="Project session counts that trigger cross-session co-access synthesis.",
    )
    co_access_min_ratio: float = Field(
        0.7, ge=0, le=1, description="Share of a file's edit sessions that must include the partner for a co-access memory.",
    )
    step_injection: bool = Field(True, description="Answer PostToolUse with memories that matter at this step.")
    step_limit: int = Field(4, ge=0, le=20, description="Memories shown per step injection.")
    step_min_confidence: float = Field(0.65, ge=0, le=1, description="Minimum confidence of a step-injected memory.")
    step_budget_chars: int = Field(1500, ge=100, le=50_000, description="Characters of one step injection.")
    lifecycle: LifecycleSettings = LifecycleSettings()
    ab: ABSettings = ABSettings()
