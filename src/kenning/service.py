"""The facade: the one object the edges (API, CLI, MCP, hooks) call for everything.

`Kenning(settings)` wires the parts once (`kenning.wiring.wire`: Settings → store → providers →
components) and offers the memory operations, tokens and read views as typed methods. The edges
never hold the store: every read or change they need is a method here (or on a component built
by the wiring, such as `sessions`, `observer`, `hooks`, `review`); tests/api/test_edges.py checks it.
The daemon, the CLI's offline mode and the tests all build one `Kenning` and call it.
"""

from __future__ import annotations

import builtins
from dataclasses import replace
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from kenning.codegraph.impact import ImpactReport
from kenning.codegraph.indexer import IndexReport
from kenning.core.config import Settings
from kenning.core.errors import InvalidInput
from kenning.core.telemetry import log_event, timed
from kenning.core.types import Memory, MemoryDict, MemoryDraft, MemoryFilter, Viewer
from kenning.diagnostics.health import DomainReport
from kenning.diagnostics.repair import Repaired
from kenning.diagnostics.report import probes_from
from kenning.diagnostics.timeline import Timeline
from kenning.memory import access, documents as doc_ingest, write
from kenning import localstore
from kenning.pipeline.embedding_tracker import TrackerStats, refresh_cycle
from kenning.providers.embedding import EmbeddingProvider
from kenning.retrieval.config import Preset, RecallConfig, effective_config
from kenning.retrieval.recall import Recalled, recall
from kenning.graph import views as graph_views
from kenning.observer.lifecycle import LifecycleView
from kenning.store import documents as doc_store
from kenning.store import jobs as jobstore
from kenning.store.backend import StoreDatabase
from kenning.store.memories import HistoryEntry
from kenning.store.tokens import TokenInfo
from kenning.wiring import AccessTracker, Wiring, wire
from kenning.workers.status import pipeline_status

__all__ = ["AccessTracker", "JOB_STATUSES", "Kenning", "open_local_store"]

JOB_STATUSES = jobstore.STATUSES


class MemoryView(MemoryDict):
    """A memory as /api/memory/{id} and `kenning show` give it: its fields, its history and lifecycle."""

    history: list[HistoryEntry]
    lifecycle: LifecycleView


class DocumentView(doc_store.Document, total=False):
    """A document as /api/documents/{id} shows it: with its chunks when asked for."""

    chunks: list[doc_store.DocumentChunk]


class Kenning:
    """One memory store with its providers and components, behind typed methods."""

    def __init__(self, settings: Settings, *, embedder: EmbeddingProvider | None = None) -> None:
        self.settings = settings
        self._wiring: Wiring = wire(settings, self, embedder=embedder)
        w = self._wiring
        # The built components, for the edges' calls into them (none of them is the store).
        self.reads = w.reads
        self.embedder = w.embedder
        self.access = w.access
        self.local_viewer = w.local_viewer
        self.writer = w.writer
        self.llm = w.llm
        self.max_chars = settings.recall.max_content_chars
        self.team = w.team
        self.predictor = w.predictor
        self.workers = w.workers
        self.sessions = w.sessions
        self.observer = w.observer
        self.hooks = w.hooks
        self.git = w.git
        self.review = w.review
        self.started = False

    @property
    def db(self) -> StoreDatabase:
        """The store handle, for tests and benches that reach below the facade; the edges never
        use it (tests/api/test_edges.py)."""
        return self._wiring.db

    # -- lifecycle -----------------------------------------------------------
    def start(self, *, background: bool = True) -> "Kenning":
        """Warm the model and start background components (the daemon calls this)."""
        self._wiring.start(background=background)
        self.started = True
        log_event("daemon", "service started", home=str(self.settings.home))
        return self

    def close(self) -> None:
        self._wiring.close()

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

    def create_token(self, user: str, team: str = access.DEFAULT_TEAM) -> access.NewToken:
        return access.create_token(self.db, user, team)

    def list_tokens(self, *, include_revoked: bool = False) -> list[TokenInfo]:
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
                          config=cfg, budget_chars=budget_chars, reader=self.db.reader)
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

    def history(self, memory_id: str, viewer: Viewer | None = None) -> list[HistoryEntry]:
        return self.reads.history(memory_id, viewer)

    def edit(self, memory_id: str, changes: Mapping[str, object], *, actor: str | None = None,
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

    def stats(self) -> localstore.StoreStats:
        return localstore.stats(self.db, self.settings, self.embedder.model_id)

    # -- reads for the API and the CLI (they reach store/, graph/ and workers/ only through here) --
    def documents(self, *, status: str | None = None, limit: int = 50, offset: int = 0
                  ) -> tuple[builtins.list[doc_store.Document], int]:
        return doc_store.list_documents(self.db.reader(), status=status, limit=limit, offset=offset)

    def document(self, doc_id: str, *, chunks: bool = False) -> DocumentView:
        doc: DocumentView = {**doc_store.get_document(self.db.reader(), doc_id)}
        if chunks:
            doc["chunks"] = doc_store.document_chunks(self.db.reader(), doc_id)
        return doc

    def submit_document(self, *, text: str | None = None, url: str | None = None, title: str | None = None,
                        project: str | None = None, tags: builtins.list[str] | None = None,
                        content_type: str | None = None, enqueue: bool = True) -> str:
        """Store a document (pasted text or a URL to fetch) for ingestion; queued for the documents
        worker when `enqueue`, else the caller runs `ingest_document` itself. Returns its id."""
        cfg = self.settings.pipeline
        return doc_ingest.submit_document(
            self.db, text=text, url=url, title=title, project=project, tags=tags, content_type=content_type,
            max_bytes=cfg.documents.max_content_bytes, enqueue=enqueue, max_attempts=cfg.worker.max_retries,
            secret_policy=self.settings.secrets, allow_private=cfg.documents.allow_private_urls,
        )

    def ingest_document(self, doc_id: str, *,
                        progress: Callable[[str, int, int], None] | None = None) -> dict[str, object]:
        """Run a submitted document through chunking and embedding into `document_chunk` memories."""
        return doc_ingest.ingest_document(self.writer, doc_id, self.settings.pipeline.documents, progress=progress)

    def mark_document_failed(self, doc_id: str, error: str) -> None:
        doc_ingest.mark_failed(self.db, doc_id, error)

    def timeline(self, ident: str, *, source: str | None = None, limit: int = 500,
                 offset: int = 0) -> Timeline:
        return self.reads.timeline(ident, source=source, limit=limit, offset=offset)

    # -- the code graph: the same reads as the offline CLI's (LocalStore) ---------------------
    def code_impact(self, target: str, *, project: str | None = None, depth: int = 3,
                    cwd: str | None = None) -> ImpactReport:
        return self.reads.code_impact(target, project=project, depth=depth, cwd=cwd)

    def code_memories(self, files: builtins.list[str], *, project: str | None = None, depth: int = 1,
                      limit: int = 20) -> dict[str, object]:
        return self.reads.code_memories(files, project=project, depth=depth, limit=limit)

    def code_modules(self, project: str | None, *, resolution: float = 1.0, cwd: str | None = None) -> dict[str, object]:
        return self.reads.code_modules(project, resolution=resolution, cwd=cwd)

    def code_projects(self) -> dict[str, object]:
        return self.reads.code_projects()

    def code_project_for_path(self, path: str) -> tuple[str, str] | None:
        return self.reads.code_project_for_path(path)

    def code_index(self, root: Path | str, project: str) -> IndexReport:
        return self.reads.code_index(root, project)

    def code_refresh(self, project: str, files: builtins.list[str]) -> IndexReport:
        return self.reads.code_refresh(project, files)

    # -- diagnostics, with this service's live probes (embedder, LLM, predictor) -------------------
    def diagnostics(self) -> dict[str, object]:
        return self.reads.diagnostics(probes_from(self))

    def diagnostics_domain(self, domain: str) -> DomainReport:
        return self.reads.diagnostics_domain(domain, probes_from(self))

    def repair(self, actions: builtins.list[str]) -> builtins.list[Repaired]:
        return self.reads.repair(actions, self.embedder)

    def entities(self, *, query: str | None = None, entity_type: str | None = None, limit: int = 50,
                 offset: int = 0, order: str = "mentions") -> dict[str, object]:
        return graph_views.entity_list(self.db.reader(), query=query, entity_type=entity_type, limit=limit,
                                       offset=offset, order=order)

    def entity(self, id_or_name: str, *, memory_limit: int = 50) -> dict[str, object]:
        return graph_views.entity_view(self.db.reader(), id_or_name, memory_limit=memory_limit)

    def jobs(self, *, status: str | None = None, job_type: str | None = None, memory_id: str | None = None,
             limit: int = 50) -> builtins.list[dict[str, object]]:
        if status is not None and status not in JOB_STATUSES:
            raise InvalidInput(f"unknown job status {status!r}; one of {', '.join(JOB_STATUSES)}")
        return [j.to_dict() for j in jobstore.list_jobs(self.db, status=status, job_type=job_type,
                                                         memory_id=memory_id, limit=limit)]

    def requeue_dead_jobs(self, *, job_type: str | None = None, limit: int = 100) -> int:
        return jobstore.requeue_dead(self.db, job_type=job_type, limit=limit)

    def pipeline_status(self) -> dict[str, object]:
        return pipeline_status(self.settings.pipeline, self.db, self.workers, self.llm)

    def start_worker(self, name: str) -> dict[str, object]:
        """Start one background worker (NotFound for an unknown name); its stats."""
        self.workers.start(name)
        return self.workers.get(name).stats()

    def stop_worker(self, name: str) -> dict[str, object]:
        self.workers.stop(name)
        return self.workers.get(name).stats()

    @property
    def embedding_model(self) -> str:
        """The id of the embedding model this service embeds with."""
        return self.embedder.model_id


open_local_store = localstore.open_local_store  # the store alone, for offline CLI commands (kenning.localstore)
