"""Wiring: Settings → store → providers → components, built once, in this order, explicitly.

`wire()` is the one place that builds the parts of a running kenning and hands each the narrow
things it needs (the store, the embedder, the write path, callbacks into the facade's memory
operations). It returns a `Wiring`: the built parts, started and closed together. The facade
(`kenning.service.Kenning`) builds one and is what the edges (API, CLI, MCP, hooks) call; they
never see the store itself.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from kenning import localstore
from kenning.codegraph import events as code_events
from kenning.codegraph import links as code_links
from kenning.core.config import Settings
from kenning.core.heap import Trimmer
from kenning.core.periodic import Periodic
from kenning.core.telemetry import log_event, record_error
from kenning.core.types import Memory, MemoryDraft, MemoryFilter, Viewer
from kenning.hookservice import CodeIndexHooks, HooksService
from kenning.memory import access, write
from kenning.memory.git_history import GitIngest
from kenning.memory.review import Review
from kenning.memory.team import TeamServer
from kenning.observer.deps import ObserverDeps
from kenning.observer.service import Observer
from kenning.pipeline import hooks as pipeline_hooks
from kenning.pipeline.claim_gate import ClaimGate
from kenning.pipeline.embedding_tracker import pending_notice
from kenning.predictor.service import Predictor
from kenning.providers.budget import BudgetedProvider, build_budgeted_provider
from kenning.providers.embedding import EmbeddingProvider
from kenning.providers.registry import build_embedding_provider
from kenning.retrieval.diversity import diversity_select
from kenning.retrieval.recall import Recalled
from kenning.retrieval.scoring import effective_score
from kenning.sessions.context import SessionDeps
from kenning.sessions.manager import SessionManager
from kenning.store import memories as store
from kenning.store.backend import StoreDatabase
from kenning.store.factory import open_store
from kenning.store.vectors import knn
from kenning.workers.deps import WorkerDeps
from kenning.workers.manager import WorkerManager
from kenning.workers.summaries import SummaryWorker

REAL_LLMS = ("ollama", "openai", "claude-cli")  # the offline rules can't judge claims or write summaries


class Operations(Protocol):
    """The facade's memory operations the components call back: bound when wired, called only once
    everything is built (team routing, authorship and access counting live in the facade)."""

    def remember(self, draft: MemoryDraft, *, actor: str | None = None, embed: bool = True,
                 viewer: Viewer | None = None) -> write.RememberResult: ...

    def remember_many(self, drafts: list[MemoryDraft], *, actor: str | None = None,
                      viewer: Viewer | None = None) -> list[write.RememberResult]: ...

    def recall_untracked(self, query: str, *, limit: int, filters: MemoryFilter | None) -> Recalled: ...

    def edit(self, memory_id: str, changes: dict[str, object], *, actor: str | None = None,
             reason: str | None = None, viewer: Viewer | None = None) -> Memory: ...

    def get(self, memory_id: str, viewer: Viewer | None = None) -> Memory: ...


class AccessTracker:
    """Counts recalls as accesses off the read path: queued, then flushed in one write tx."""

    def __init__(self, db: StoreDatabase, interval_s: float = 0.5) -> None:
        self.db = db
        self._pending: list[str] = []
        self._lock = threading.Lock()
        self._loop = Periodic("access-tracker", interval_s, self.flush)

    def add(self, ids: list[str]) -> None:
        with self._lock:
            self._pending.extend(ids)

    def flush(self) -> None:
        with self._lock:
            ids, self._pending = self._pending, []
        if ids:
            try:
                with self.db.with_write_tx() as conn:
                    store.record_access(conn, ids)
            except Exception as exc:  # background boundary: never lose the daemon over a counter
                record_error("mutation", f"access tracking flush failed: {exc}")

    @property
    def running(self) -> bool:
        return self._loop.running

    def start(self) -> None:
        self._loop.start()

    def stop(self) -> None:
        self._loop.stop()
        self.flush()


@dataclass(frozen=True)
class Wiring:
    """The built parts of one kenning, each once. Only the facade holds this (and tests/benches
    that reach a component's internals)."""

    settings: Settings
    db: StoreDatabase
    reads: localstore.LocalStore  # reads, forget/recover/purge: the same code as the offline CLI's
    embedder: EmbeddingProvider
    access: AccessTracker
    heap: Trimmer  # freed heap memory back to the OS after each burst of requests (core.heap)
    local_viewer: Viewer  # author of what this daemon's own user writes
    writer: write.WritePath  # the one write path of every memory
    llm: BudgetedProvider  # pipeline LLM behind the daily token budget
    team: TeamServer  # team.url set: team/org memories live on the team server
    predictor: Predictor  # learned scorer; its sidecar starts in start()
    workers: WorkerManager  # background workers (extraction, summaries, ...)
    sessions: SessionManager
    observer: Observer  # tool-event scratchpads, step injection, promotion
    hooks: HooksService  # harness events (core.events) → sessions, observer, code graph
    git: GitIngest  # `kenning ingest git`: commits as memories
    review: Review  # `kenning review`: accept / edit / reject what was learned

    def start(self, *, background: bool = True) -> None:
        """Warm the model and start the background components (the daemon's start)."""
        self.embedder.warm_up()
        # Load the vector matrix now, so the first session-start does not pay for it in its budget.
        knn(self.db.reader(), self.embedder.embed("warm up"), self.embedder.model_id, 1)
        if notice := pending_notice(self.db, self.embedder):
            log_event("embedding", notice)
            print(f"kenning: {notice}", file=sys.stderr)
        if background:
            self.access.start()
            self.heap.start()
            self.workers.start_all()
            self.predictor.start()
            self.observer.start()

    def close(self) -> None:
        self.workers.stop_all()
        self.observer.close()
        self.predictor.stop()
        self.access.stop()
        self.heap.stop()
        self.team.close()
        self.db.close()


def wire(settings: Settings, ops: Operations, *, embedder: EmbeddingProvider | None = None) -> Wiring:
    """Build every part once: the store, the providers, then the components that use them."""
    settings.home.mkdir(parents=True, exist_ok=True)
    db = open_store(settings.store, settings.db_path)
    embedder = embedder or build_embedding_provider(settings.embedding)
    local_viewer = access.local_viewer()
    writer = write.WritePath(
        db, embedder, max_chars=settings.recall.max_content_chars, secret_policy=settings.secrets,
        default_writer=local_viewer,
        draft_rules=pipeline_hooks.DRAFT_RULES,  # decision auto-protection
        in_tx_hooks=(write.link_entities,  # entity graph
                     *pipeline_hooks.IN_TX_HOOKS,  # enqueue the extract job in the write tx
                     code_links.link_in_tx),  # attach new memories to the code they name
    )
    llm = build_budgeted_provider(settings, db)
    predictor = Predictor(settings, db)
    real_llm = settings.llm.provider in REAL_LLMS
    session_deps = SessionDeps(  # what the session lifecycle borrows (see sessions.context)
        db=db, settings=settings.sessions, embedder=embedder,
        effective_score=effective_score,  # topic diversity: the one setting, recall.topic_diversity
        diversity_select=partial(diversity_select, **settings.recall.topic_diversity.model_dump()),
        recall=ops.recall_untracked,
        remember=partial(ops.remember, actor="session-summary"),
        remember_many=partial(ops.remember_many, actor="session-episodes"),
        generate=llm.generate if real_llm else None,
        predictor=predictor,
        claim_gate=ClaimGate(llm) if real_llm else None,  # offline: the claim test alone
    )
    workers = WorkerManager(WorkerDeps(
        db=db, settings=settings, embedder=embedder, llm=llm, writer=writer,
        recall=ops.recall_untracked, sessions=session_deps,
    ))
    summaries = workers.get("summaries")  # runs session summary jobs from the one job queue
    if not isinstance(summaries, SummaryWorker):
        raise TypeError(f"worker 'summaries' is a {type(summaries).__name__}, not a SummaryWorker")
    sessions = SessionManager(session_deps, summaries)
    observer = Observer(ObserverDeps(
        db=db, settings=settings.observer, embedder=embedder,
        remember_many=partial(ops.remember_many, actor="observer"),
        generate=llm.generate if real_llm else None, ranking=settings.sessions.ranking,
    ))
    hooks = HooksService(sessions, observer,
                         CodeIndexHooks(refresh=partial(code_events.refresh_in_background, db),
                                        on_tool_use=code_events.EditReindexer(db).submit),
                         observer_enabled=lambda: settings.observer.enabled)
    return Wiring(
        settings=settings, db=db, reads=localstore.LocalStore(settings, db=db), embedder=embedder,
        access=AccessTracker(db), heap=Trimmer(), local_viewer=local_viewer, writer=writer, llm=llm,
        team=TeamServer(settings.team), predictor=predictor, workers=workers, sessions=sessions,
        observer=observer, hooks=hooks,
        git=GitIngest(db, ops.remember_many),
        review=Review(db, ops.edit, ops.get),
    )
