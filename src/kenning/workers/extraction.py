"""The extraction worker: leases `extract` jobs and runs the v2 pipeline on each memory.

Built from the service's WorkerDeps: its LLM (a BudgetedProvider), its write path (new
facts are stored like every other memory), and its hybrid recall as the decision stage's candidate
source. Over the daily token budget the worker leases nothing (`waiting` says why) and a
job caught mid-way is deferred without spending an attempt. `pipeline.enabled: false`
⇒ the worker is not built and extract jobs wait.
"""

from __future__ import annotations

from typing import Unpack

from kenning.core.activity import yield_to_foreground
from kenning.core.types import MemoryFilter, Viewer
from kenning.pipeline.decision import Candidate, CandidateFinder
from kenning.pipeline.hooks import EXTRACT_JOB
from kenning.pipeline.runner import PipelineContext, run_extraction
from kenning.providers.budget import BudgetExhausted
from kenning.store.jobs import Job
from kenning.workers.base import JobDeferred, LeaseOptions, LeaseWorker, backoff_from_settings
from kenning.workers.deps import RecallFn, WorkerDeps


STAGE_MAX_WAIT_S = 0.5


class ExtractionWorker(LeaseWorker):
    job_types = (EXTRACT_JOB,)

    def __init__(self, ctx: PipelineContext, **kw: Unpack[LeaseOptions]) -> None:
        super().__init__("extraction", ctx.db, **kw)
        self.ctx = ctx
        if ctx.pause is None:  # between a job's stages, the agent's requests go first
            ctx.pause = lambda: yield_to_foreground(STAGE_MAX_WAIT_S, self._stop)

    def blocked_reason(self) -> str | None:
        return self.ctx.provider.blocked_reason()

    def handle(self, job: Job) -> dict[str, object] | None:
        if not job.memory_id:
            raise ValueError(f"extract job {job.id} has no memory_id")
        try:
            return run_extraction(self.ctx, job.memory_id, imported=job.payload.get("imported") is True)
        except BudgetExhausted as exc:
            raise JobDeferred(exc.retry_after_s, str(exc)) from exc

    def extra_stats(self) -> dict[str, object]:
        provider = self.ctx.provider
        return {**super().extra_stats(), "mode": self.ctx.settings.mode,
                "provider": provider.name, "model": provider.model}


def recall_candidates(recall: RecallFn) -> CandidateFinder:
    """The decision stage's candidate finder over the service's hybrid recall."""

    def find(text: str, k: int, exclude: set[str], project: str | None, viewer: Viewer | None = None) -> list[Candidate]:
        hits = recall(text, limit=k + len(exclude), filters=MemoryFilter(project=project, viewer=viewer))
        return [Candidate(h.memory.id, h.memory.content, h.memory.type, float(h.score))
                for h in hits if h.memory.id not in exclude][:k]

    return find


def pipeline_context(deps: WorkerDeps) -> PipelineContext:
    return PipelineContext(
        db=deps.db, provider=deps.llm, settings=deps.settings.pipeline, writer=deps.writer,
        find_candidates=recall_candidates(deps.recall),
    )


def build(deps: WorkerDeps) -> ExtractionWorker | None:
    pipeline = deps.settings.pipeline
    if not pipeline.enabled:
        return None
    return ExtractionWorker(
        pipeline_context(deps), poll_s=pipeline.worker.poll_ms / 1000.0,
        max_attempts=pipeline.worker.max_retries, **backoff_from_settings(pipeline.worker),
    )
