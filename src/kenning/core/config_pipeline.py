"""The `pipeline:` section of config.yaml (memory-pipeline-v2 "Configuration Reference").

Every default and range below comes from the v2 doc's configuration reference (or, where the
reference table is silent, from the number stated in the doc's prose). Keys are snake_case;
the doc's camelCase spellings (`shadowMode`, `leaseTimeoutMs`, ...) are accepted as aliases.

One deliberate difference: the v2 doc defaults `extraction.provider` to `claude-code`/`haiku`.
SPEC S3 (which wins) makes the deterministic offline provider the default, so extraction
inherits the `llm:` section unless a provider is named here.

Keys that looked live but did nothing were removed in issue 13 (`REMOVED_KEYS`): a config that
still sets one is refused with a message naming the key and what replaced it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

_SECOND = 1_000
_MINUTE = 60_000
_HOUR = 3_600_000


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


class ExtractionSettings(_Section):
    provider: Literal["inherit", "offline", "ollama", "openai", "claude-cli", "none"] = Field(
        "inherit", description="LLM for extraction/decision; 'inherit' uses the llm: section (offline by default)."
    )
    model: str | None = Field(None, description="Model override; None inherits llm.model.")
    timeout: int = Field(45_000, ge=5_000, le=300_000, description="LLM generation timeout, ms.")
    min_confidence: float = Field(
        0.7, ge=0.0, le=1.0,
        description="minFactConfidenceForWrite: facts (and decisions) below this are not written.",
    )
    max_facts: int = Field(20, ge=1, le=200, description="Facts kept per input; the rest dropped with a warning.")
    max_entities: int = Field(50, ge=1, le=500, description="Entity triples kept per input.")
    min_fact_chars: int = Field(10, ge=1, le=1000, description="Shorter facts are rejected.")
    max_fact_chars: int = Field(2_000, ge=50, le=100_000, description="Longer facts are truncated.")
    max_input_chars: int = Field(12_000, ge=500, le=1_000_000, description="Input truncated before the prompt is built.")
    candidates: int = Field(5, ge=1, le=50, description="Top-k hybrid candidates per fact for the decision stage.")
    candidate_min_score: float = Field(0.0, ge=0.0, le=1.0, description="Candidates scoring below are dropped.")


class WorkerSettings(_Section):
    poll_ms: int = Field(2_000, ge=100, le=60_000, description="Idle tick interval of a lease worker, ms.")
    max_retries: int = Field(3, ge=1, le=10, description="max_attempts of a job; after that it is dead.")
    lease_timeout_ms: int = Field(300_000, ge=10_000, le=600_000, description="A lease older than this is reaped.")
    reaper_interval_ms: int = Field(60_000, ge=100, le=3_600_000, description="Stale-lease reaper period, ms.")
    backoff_base_ms: int = Field(1_000, ge=10, le=60_000, description="First retry delay; doubles per failure.")
    backoff_cap_ms: int = Field(30_000, ge=100, le=600_000, description="Upper bound of the retry delay.")
    backoff_jitter_ms: int = Field(500, ge=0, le=10_000, description="Random jitter added to each retry delay (at most).")


class GraphSettings(_Section):
    enabled: bool = Field(
        True, description="Persist the entity triples extraction finds and run aspect feedback. Recall uses the"
        " graph through the `graph`/`full` presets (a request's `preset`), not through this switch.",
    )
    feedback_delta: float = Field(0.02, ge=0.0, le=1.0, description="Aspect weight gained per FTS-confirmed memory.")
    feedback_min_weight: float = Field(0.1, ge=0.0, le=1.0, description="Aspect weight floor (feedback and decay).")
    feedback_max_weight: float = Field(1.0, ge=0.0, le=10.0, description="Aspect weight ceiling.")
    aspect_stale_days: int = Field(14, ge=1, le=3650, description="Aspects untouched this long decay.")
    aspect_decay_rate: float = Field(0.05, ge=0.0, le=1.0, description="Weight lost per decay run.")
    aspect_decay_every_sessions: int = Field(10, ge=1, le=10_000, description="Run decay every N feedback sessions.")


class AutonomousSettings(_Section):
    enabled: bool = Field(True, description="Run the maintenance worker on its interval.")
    frozen: bool = Field(False, description="autonomousFrozen: stop the maintenance interval even if enabled.")
    allow_update_delete: bool = Field(
        True, description="Apply UPDATE/DELETE decisions (as non-destructive supersession); false blocks them."
    )
    maintenance_interval_ms: int = Field(30 * _MINUTE, ge=_MINUTE, le=24 * _HOUR, description="Maintenance cycle period.")
    maintenance_mode: Literal["observe", "execute"] = Field("execute", description="observe only logs recommendations.")


class RepairSettings(_Section):
    reembed_cooldown_ms: int = Field(5 * _MINUTE, ge=10 * _SECOND, le=_HOUR)
    reembed_hourly_budget: int = Field(10, ge=1, le=1_000)
    requeue_cooldown_ms: int = Field(_MINUTE, ge=5 * _SECOND, le=_HOUR)
    requeue_hourly_budget: int = Field(50, ge=1, le=1_000)
    dedup_cooldown_ms: int = Field(10 * _MINUTE, ge=10 * _SECOND, le=_HOUR)
    dedup_hourly_budget: int = Field(3, ge=1, le=100)
    dedup_semantic_threshold: float = Field(0.92, ge=0.0, le=1.0)
    dedup_batch_size: int = Field(100, ge=10, le=1_000)
    halt_after_non_improving: int = Field(3, ge=1, le=100, description="Halt tracker: non-improving runs before halt.")


class DocumentSettings(_Section):
    worker_interval_ms: int = Field(10_000, ge=_SECOND, le=300 * _SECOND)
    chunk_size: int = Field(2_000, ge=200, le=50_000, description="Chunk window, characters.")
    chunk_overlap: int = Field(200, ge=0, le=10_000, description="Characters shared with the previous chunk.")
    max_content_bytes: int = Field(10 * 1024 * 1024, ge=1024, le=100 * 1024 * 1024)
    fetch_timeout_ms: int = Field(30_000, ge=_SECOND, le=300 * _SECOND, description="URL fetch timeout, ms.")
    chunk_importance: float = Field(0.3, ge=0.0, le=1.0, description="importance of document_chunk memories.")
    allow_private_urls: bool = Field(
        False, description="Let URL documents fetch loopback, private, link-local, multicast or unspecified"
        " addresses (refused by default, at every redirect too: SSRF guard).",
    )
    max_redirects: int = Field(5, ge=0, le=20, description="Redirects followed (each target re-checked).")

    @model_validator(mode="after")
    def _overlap_below_size(self) -> "DocumentSettings":
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError(f"chunk_overlap ({self.chunk_overlap}) must be < chunk_size ({self.chunk_size})")
        return self


class EmbeddingTrackerSettings(_Section):
    enabled: bool = True
    poll_ms: int = Field(5_000, ge=_SECOND, le=60 * _SECOND)
    batch_size: int = Field(8, ge=1, le=20)


class HintSettings(_Section):
    enabled: bool = Field(
        False, description="Generate prospective hints (the hints worker) and let recall's BM25 leg match them.",
    )
    max: int = Field(5, ge=1, le=20, description="Hints generated per memory.")
    timeout: int = Field(45_000, ge=5_000, le=300_000, description="LLM generation timeout, ms.")
    poll: int = Field(5_000, ge=1_000, le=60_000, description="Worker polling interval, ms.")


class RetentionSettings(_Section):
    interval_ms: int = Field(6 * _HOUR, ge=_MINUTE, le=7 * 24 * _HOUR, description="Retention sweep period.")
    tombstone_days: int = Field(30, ge=1, le=3650)
    history_days: int = Field(180, ge=1, le=3650)
    completed_jobs_days: int = Field(14, ge=1, le=3650)
    dead_jobs_days: int = Field(30, ge=1, le=3650)
    batch_limit: int = Field(500, ge=1, le=100_000, description="Rows per step per sweep.")


class PipelineSettings(_Section):
    enabled: bool = Field(True, description="Master switch; false means no extraction jobs are processed.")
    shadow_mode: bool = Field(False, description="Extract and decide, audit proposals, write no memories.")
    mutations_frozen: bool = Field(False, description="Emergency brake: no pipeline writes at all.")
    semantic_contradiction_enabled: bool = Field(False, description="LLM contradiction check on UPDATE proposals.")
    semantic_contradiction_timeout_ms: int = Field(45_000, ge=5_000, le=300_000)
    extraction: ExtractionSettings = ExtractionSettings()
    worker: WorkerSettings = WorkerSettings()
    graph: GraphSettings = GraphSettings()
    autonomous: AutonomousSettings = AutonomousSettings()
    repair: RepairSettings = RepairSettings()
    documents: DocumentSettings = DocumentSettings()
    embedding_tracker: EmbeddingTrackerSettings = EmbeddingTrackerSettings()
    hints: HintSettings = HintSettings()
    retention: RetentionSettings = RetentionSettings()

    @property
    def mode(self) -> str:
        """'disabled' | 'shadow' | 'controlled-write' | 'full' composed from the flags (v2 "Pipeline Modes")."""
        if not self.enabled:
            return "disabled"
        if self.shadow_mode or self.mutations_frozen:
            return "shadow"
        return "full" if self.autonomous.allow_update_delete else "controlled-write"


_RECALL_PRESETS = ("it did nothing: the graph, dampening and rerank recall stages run only in a preset"
                   " (`graph`, `dampening`, `rerank`, `full`: a request's `preset`), with the preset's values")
REMOVED_KEYS: dict[str, str] = {
    "pipeline.reranker": _RECALL_PRESETS,
    "pipeline.dampening": _RECALL_PRESETS,
    "pipeline.graph.boost_weight": _RECALL_PRESETS,
    "pipeline.graph.boost_timeout_ms": _RECALL_PRESETS,
    "pipeline.continuity": "it duplicated sessions.checkpoint_*, which are the settings read",
    "pipeline.guardrails": "never read; recall.max_content_chars caps a memory's content",
    "pipeline.telemetry": "never read; kenning sends no telemetry",
    "pipeline.telemetry_enabled": "never read; kenning sends no telemetry",
    "pipeline.structural": "never read: no structural-classification worker exists",
}
