"""Wiring: Settings → Database → embedding provider → components, and the memory operations.

The daemon, the CLI's offline mode and the tests all build one `Kenning` and call it.
Components from other capabilities hang off this object as attributes built in `start()`.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import replace
from functools import partial
from collections.abc import Iterator
from typing import Any

from kenning.core.config import Settings
from kenning.core.errors import InvalidInput
from kenning.core.telemetry import log_event, record_error, timed
from kenning.core.types import Memory, MemoryDraft, MemoryFilter, Viewer
from kenning.codegraph import links as code_links
from kenning.memory import access, write
from kenning.memory.team import TeamServer
from kenning import localstore
from kenning.hookservice import HooksService
from kenning.observer.deps import ObserverDeps
from kenning.observer.service import Observer
from kenning.memory.git_history import GitIngest
from kenning.memory.review import Review
from kenning.pipeline import hooks as pipeline_hooks
from kenning.pipeline.claim_gate import ClaimGate
from kenning.pipeline.embedding_tracker import TrackerStats, pending_notice, refresh_cycle
from kenning.providers.budget import build_budgeted_provider
from kenning.providers.embedding import EmbeddingProvider
from kenning.providers.registry import build_embedding_provider
from kenning.retrieval.config import Preset, RecallConfig, effective_config
from kenning.retrieval.diversity import diversity_select
from kenning.retrieval.recall import Recalled, recall
from kenning.retrieval.scoring import effective_score
from kenning.sessions.context import SessionDeps
from kenning.predictor.service import Predictor
from kenning.sessions.manager import SessionManager
from kenning.graph import views as graph_views
from kenning.store import documents as doc_store
from kenning.store import jobs as jobstore
from kenning.store import memories as store
from kenning.store.vectors import knn
from kenning.store.backend import open_store
from kenning.store.backend import StoreDatabase
from kenning.workers.deps import WorkerDeps
from kenning.workers.manager import WorkerManager
from kenning.workers.summaries import SummaryWorker
from kenning.workers.status import pipeline_status

JOB_STATUSES = jobstore.STATUSES


class AccessTracker:
    """Counts recalls as accesses off the read path: queued, then flushed in one write tx."""

    def __init__(self, db: StoreDatabase, interval_s: float = 0.5) -> None:
        self.db = db
        self.interval_s = interval_s
        self._pending: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

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
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        def loop() -> None:
            while not self._stop.wait(self.interval_s):
                self.flush()

        self._thread = threading.Thread(target=loop, name="access-tracker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=2)
        self.flush()


class Kenning:
    """One memory store with its providers and components."""

    def __init__(self, settings: Settings, *, embedder: EmbeddingProvider | None = None) -> None:
        self.settings = settings
        settings.home.mkdir(parents=True, exist_ok=True)
        self.db = open_store(settings.store, settings.db_path)
        self.reads = localstore.LocalStore(settings, db=self.db)  # reads, forget/recover/purge: shared with the offline CLI
        self.embedder = embedder or build_embedding_provider(settings.embedding)
        self.access = AccessTracker(self.db)
        self.local_viewer = access.local_viewer()  # author of what this daemon's own user writes
        self.writer = write.WritePath(  # the one write path of every memory
            self.db, self.embedder, max_chars=settings.recall.max_content_chars, secret_policy=settings.secrets,
            default_writer=self.local_viewer,
            draft_rules=pipeline_hooks.DRAFT_RULES,  # decision auto-protection
            in_tx_hooks=(write.link_entities,  # entity graph
                         *pipeline_hooks.IN_TX_HOOKS,  # enqueue the extract job in the write tx
                         code_links.link_in_tx),  # attach new memories to the code they name
        )
        self.llm = build_budgeted_provider(settings, self.db)  # pipeline LLM behind the daily token budget
        self.max_chars = settings.recall.max_content_chars
        self.team = TeamServer(settings.team)  # team.url set: team/org memories live on the team server
        self.predictor = Predictor(settings, self.db)  # learned scorer; its sidecar starts in start()
        session_deps = self._session_deps()
        self.workers = WorkerManager(WorkerDeps(  # background workers (extraction, ...); started by start()
            db=self.db, settings=settings, embedder=self.embedder, llm=self.llm, writer=self.writer,
            recall=self.recall_untracked, sessions=session_deps,
        ))
        summaries = self.workers.get("summaries")  # runs session summary jobs from the one job queue
        if not isinstance(summaries, SummaryWorker):
            raise TypeError(f"worker 'summaries' is a {type(summaries).__name__}, not a SummaryWorker")
        self.sessions = SessionManager(session_deps, summaries)
        self.observer = Observer(self._observer_deps())  # tool-event scratchpads, step injection, promotion
        self.hooks = HooksService(self.sessions, self.observer, self.db,  # harness events (core.events) → all three
                                  observer_enabled=lambda: self.settings.observer.enabled)
        self.git = GitIngest(self.db, self.remember_many)  # `kenning ingest git`: commits as memories
        self.review = Review(self.db, self.edit, self.get)  # `kenning review`: accept / edit / reject what was learned
        self.started = False

    # -- lifecycle -----------------------------------------------------------
    def start(self, *, background: bool = True) -> "Kenning":
        """Warm the model and start background components (the daemon calls this)."""
        self.embedder.warm_up()
        # Load the vector matrix now, so the first session-start does not pay for it in its budget.
        knn(self.db.reader(), self.embedder.embed("warm up"), self.embedder.model_id, 1)
        if notice := pending_notice(self.db, self.embedder):
            log_event("embedding", notice)
            print(f"kenning: {notice}", file=sys.stderr)
        if background:
            self.access.start()
            self.workers.start_all()
            self.predictor.start()
            self.observer.start()
        self.started = True
        log_event("daemon", "service started", home=str(self.settings.home))
        return self

    def close(self) -> None:
        self.workers.stop_all()
        self.observer.close()
        self.predictor.stop()
        self.access.stop()
        self.team.close()
        self.db.close()

    def _session_deps(self) -> SessionDeps:
        """What the session lifecycle borrows from retrieval/memory/providers (see sessions.context)."""
        real_llm = self.settings.llm.provider in ("ollama", "openai", "claude-cli")  # offline rules can't judge
        return SessionDeps(
            db=self.db, settings=self.settings.sessions, embedder=self.embedder,
            effective_score=effective_score,  # topic diversity: the one setting, recall.topic_diversity
            diversity_select=partial(diversity_select, **self.settings.recall.topic_diversity.model_dump()),
            recall=self.recall_untracked,
            remember=partial(self.remember, actor="session-summary"),
            remember_many=partial(self.remember_many, actor="session-episodes"),
            generate=self.llm.generate if real_llm else None,
            predictor=self.predictor,
            claim_gate=ClaimGate(self.llm) if real_llm else None,  # offline: the claim test alone
        )

    def _observer_deps(self) -> ObserverDeps:
        real_llm = self.settings.llm.provider in ("ollama", "openai", "claude-cli")
        return ObserverDeps(
            db=self.db, settings=self.settings.observer, embedder=self.embedder,
            remember_many=partial(self.remember_many, actor="observer"),
            generate=self.llm.generate if real_llm else None, ranking=self.settings.sessions.ranking,
        )

    # -- memory operations -------------------------------------------------------
    def remember(self, draft: MemoryDraft, *, actor: str | None = None, embed: bool = True,
                 viewer: Viewer | None = None) -> write.RememberResult:
        if self.team.enabled and self.team.is_shared(draft):
            return self.remember_many([draft], actor=actor, viewer=viewer)[0]
        with timed("remember"):
            return self.writer.remember(self._stamp(draft, viewer), actor=self._actor(actor, viewer), embed=embed)

    # -- who: authors and visibility (teams) -------------------------------------------------
    @staticmethod
    def _stamp(draft: MemoryDraft, viewer: Viewer | None) -> MemoryDraft:
        """The writer (author, team) of a new memory: the caller's (the write path stamps the local user
        on the others)."""
        return draft if draft.writer or viewer is None else replace(draft, writer=viewer)

    @staticmethod
    def _actor(actor: str | None, viewer: Viewer | None) -> str | None:
        """History names the token's user for changes made with one."""
        return viewer.user if viewer is not None and not viewer.sees_all else actor

    def viewer_for_token(self, secret: str) -> Viewer | None:
        return access.viewer_for_token(self.db, secret)

    def team_mode(self) -> bool:
        return access.team_mode(self.db)

    def create_token(self, user: str, team: str = access.DEFAULT_TEAM) -> dict[str, Any]:
        return access.create_token(self.db, user, team)

    def list_tokens(self, *, include_revoked: bool = False) -> list[dict[str, Any]]:
        return access.list_tokens(self.db, include_revoked=include_revoked)

    def revoke_token(self, id_or_user: str) -> list[str]:
        return access.revoke_token(self.db, id_or_user)

    def embed_pending(self, limit: int = 1000) -> int:
        """Embed memories stored raw (`remember(embed=False)`, a model switch); returns how many."""
        return refresh_cycle(self.db, self.embedder, limit, TrackerStats())["refreshed"]

    def remember_many(self, drafts: list[MemoryDraft], *, actor: str | None = None,
                      viewer: Viewer | None = None) -> list[write.RememberResult]:
        drafts, actor = [self._stamp(d, viewer) for d in drafts], self._actor(actor, viewer)
        with timed("remember_many"):
            if self.team.enabled and any(self.team.is_shared(d) for d in drafts):
                return self._remember_with_team(drafts, actor)
            return self.writer.remember_many(drafts, actor=actor)

    def _remember_with_team(self, drafts: list[MemoryDraft], actor: str | None) -> list[write.RememberResult]:
        """Team/org drafts go to the team server, the rest here; the local ones are validated first so a
        bad one stores nothing anywhere."""
        shared = [self.team.is_shared(d) for d in drafts]
        local = [d for d, s in zip(drafts, shared) if not s]
        for draft in local:
            self.writer.validate(draft)
        remote = iter(self.team.remember_many([d for d, s in zip(drafts, shared) if s]))
        stored = iter(self.writer.remember_many(local, actor=actor) if local else [])
        return [write.RememberResult(**next(remote)) if s else next(stored) for s in shared]

    def recall(
        self, query: str, *, limit: int | None = None, filters: MemoryFilter | None = None,
        config: RecallConfig | Preset | str | None = None, budget_chars: int | None = None,
        track_access: bool = True,
    ) -> Recalled:
        """`limit` None: `recall.default_limit`. `config`: a preset by name, merged with the settings
        (`recall_config`); None: the default preset; a RecallConfig runs as given."""
        cfg = config if isinstance(config, RecallConfig) else self.recall_config(config)
        with timed("recall"):
            hits = recall(self.db.reader(), self.embedder, query, limit=limit or self.settings.recall.default_limit,
                          filters=filters,
                          config=cfg, budget_chars=budget_chars)
        if track_access and hits:
            self.access.add([h.memory.id for h in hits])
            if not self.access.running:
                self.access.flush()
        return hits

    def recall_untracked(self, query: str, *, limit: int, filters: MemoryFilter | None) -> Recalled:
        """Recall for the system's own use (sessions, the pipeline's candidates): no access counted."""
        return self.recall(query, limit=limit, filters=filters, track_access=False)

    def recall_config(self, preset: Preset | str | None = None) -> RecallConfig:
        """The config a recall with `preset` (None: the default preset) runs with: the settings and the
        preset merged by retrieval.config.effective_config (its docstring gives the precedence)."""
        return effective_config(self.settings, preset)

    def get(self, memory_id: str, viewer: Viewer | None = None) -> Memory:
        """The memory; NotFound also when `viewer` may not see it."""
        return self.reads.get(memory_id, viewer)

    def history(self, memory_id: str, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        return self.reads.history(memory_id, viewer)

    def edit(self, memory_id: str, changes: dict[str, Any], *, actor: str | None = None,
             reason: str | None = None, viewer: Viewer | None = None) -> Memory:
        self.get(memory_id, viewer)
        with timed("mutate"):
            return self.writer.edit(memory_id, changes, actor=self._actor(actor, viewer), reason=reason)

    def forget(self, memory_id: str, *, actor: str | None = None, reason: str | None = None,
               viewer: Viewer | None = None) -> Memory:
        return self.reads.forget(memory_id, actor=self._actor(actor, viewer), reason=reason, viewer=viewer)

    def recover(self, memory_id: str, *, actor: str | None = None, viewer: Viewer | None = None) -> Memory:
        return self.reads.recover(memory_id, actor=self._actor(actor, viewer), viewer=viewer)

    def purge(self, memory_id: str, *, actor: str | None = None, reason: str | None = None,
              viewer: Viewer | None = None) -> None:
        self.reads.purge(memory_id, actor=self._actor(actor, viewer), reason=reason, viewer=viewer)

    def list(self, filters: MemoryFilter | None = None, *, limit: int = 50,
             offset: int = 0) -> tuple[list[Memory], int]:
        return self.reads.list(filters, limit=limit, offset=offset)

    def export(self, fmt: str, filters: MemoryFilter | None = None) -> Iterator[str]:
        return self.reads.export(fmt, filters)

    def stats(self) -> dict[str, Any]:
        return localstore.stats(self.db, self.settings, self.embedder.model_id)

    # -- reads for the API and the CLI (they reach store/, graph/ and workers/ only through here) --
    def documents(self, *, status: str | None = None, limit: int = 50, offset: int = 0
                  ) -> tuple[list[dict[str, Any]], int]:
        return doc_store.list_documents(self.db.reader(), status=status, limit=limit, offset=offset)

    def document(self, doc_id: str, *, chunks: bool = False) -> dict[str, Any]:
        doc = doc_store.get_document(self.db.reader(), doc_id)
        if chunks:
            doc["chunks"] = doc_store.document_chunks(self.db.reader(), doc_id)
        return doc

    def entities(self, *, query: str | None = None, entity_type: str | None = None, limit: int = 50,
                 offset: int = 0, order: str = "mentions") -> dict[str, Any]:
        return graph_views.entity_list(self.db.reader(), query=query, entity_type=entity_type, limit=limit,
                                       offset=offset, order=order)

    def entity(self, id_or_name: str, *, memory_limit: int = 50) -> dict[str, Any]:
        return graph_views.entity_view(self.db.reader(), id_or_name, memory_limit=memory_limit)

    def jobs(self, *, status: str | None = None, job_type: str | None = None, memory_id: str | None = None,
             limit: int = 50) -> list[dict[str, Any]]:
        if status is not None and status not in JOB_STATUSES:
            raise InvalidInput(f"unknown job status {status!r}; one of {', '.join(JOB_STATUSES)}")
        return [j.to_dict() for j in jobstore.list_jobs(self.db, status=status, job_type=job_type,
                                                         memory_id=memory_id, limit=limit)]

    def requeue_dead_jobs(self, *, job_type: str | None = None, limit: int = 100) -> int:
        return jobstore.requeue_dead(self.db, job_type=job_type, limit=limit)

    def pipeline_status(self) -> dict[str, Any]:
        return pipeline_status(self.settings.pipeline, self.db, self.workers, self.llm)


open_local_store = localstore.open_local_store  # the store alone, for offline CLI commands (kenning.localstore)
