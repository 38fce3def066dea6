"""The store without the rest of the service: what the CLI's offline commands read and change.

`kenning list`, `show`, `stats`, `export`, `forget`, `recover`, `sessions` and `doctor` run without a
daemon on the data alone: they need neither the embedding model, the workers, the predictor nor the
session and observer components that `kenning.service.Kenning` builds, so they open the store here
and start in a fraction of the time. Everything that stores or searches memories goes through
`Kenning` (the write path with its rules and hooks, the model).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from kenning.core.config import Settings
from kenning.core.errors import InvalidInput
from kenning.core.limits import check_path
from kenning.core.telemetry import timed
from kenning.core.types import Memory, MemoryFilter, Viewer
from kenning.memory import portable
from kenning.observer import lifecycle
from kenning.store import memories as store
from kenning.store.backend import StoreDatabase
from kenning.store.factory import describe, open_store

if TYPE_CHECKING:
    from kenning.codegraph.impact import ImpactReport
    from kenning.codegraph.indexer import IndexReport
    from kenning.diagnostics.health import DomainReport
    from kenning.diagnostics.repair import Repaired
    from kenning.diagnostics.report import Probes
    from kenning.diagnostics.timeline import Timeline
    from kenning.observer.lifecycle import LifecycleView
    from kenning.providers.embedding import EmbeddingProvider
    from kenning.sessions.views import SessionDetail, SessionList
    from kenning.store.memories import HistoryEntry


def open_local_store(settings: Settings) -> StoreDatabase:
    """The configured store (SQLite or PostgreSQL), migrated, without the rest of the service: for
    CLI commands that work on the data without a daemon and without the embedding model."""
    return open_store(settings.store, settings.db_path)


class StoreStats(store.MemoryStats):
    """`kenning stats` and /api/stats: the store's counts, then the model and where the store is."""

    embedding_model: str
    db_path: str
    db_bytes: int


def stats(db: StoreDatabase, settings: Settings, model_id: str) -> StoreStats:
    """Counts by type and project, where the store is and how big, and the embedding model's id."""
    return StoreStats(
        **store.stats(db.reader()),
        embedding_model=model_id,
        db_path=describe(settings.store, settings.db_path),
        db_bytes=settings.db_path.stat().st_size if settings.db_path.exists() else 0,
    )


class LocalStore:
    """The reads and the forget/recover/purge mutations on the store alone: the offline CLI's, and
    `Kenning`'s own (its methods of the same names delegate here), so there is one of each."""

    def __init__(self, settings: Settings, db: StoreDatabase | None = None) -> None:
        self.settings = settings
        self.owns_db = db is None
        self.db = db if db is not None else open_local_store(settings)

    def close(self) -> None:
        if self.owns_db:
            self.db.close()

    def get(self, memory_id: str, viewer: Viewer | None = None) -> Memory:
        return store.check_visible(self.db.reader(), memory_id, viewer)

    def history(self, memory_id: str, viewer: Viewer | None = None) -> list[HistoryEntry]:
        self.get(memory_id, viewer)
        return store.history(self.db.reader(), memory_id)

    def lifecycle_of(self, memory: Memory) -> LifecycleView:
        """Trust level, decayed confidence, half-life and when pruning would take it (for `show`)."""
        return lifecycle.describe(memory, self.settings.observer.lifecycle)

    def list(self, filters: MemoryFilter | None = None, *, limit: int = 50,
             offset: int = 0) -> tuple[list[Memory], int]:
        return store.list_memories(self.db.reader(), filters, limit=limit, offset=offset)

    def export(self, fmt: str, filters: MemoryFilter | None = None) -> Iterator[str]:
        """Live, current memories as `fmt` text chunks (memory.portable), read page by page."""
        return portable.export_chunks(self.db.reader, fmt, filters)

    def stats(self) -> StoreStats:
        from kenning.providers.registry import build_embedding_provider  # its id only: the model is not loaded

        return stats(self.db, self.settings, build_embedding_provider(self.settings.embedding).model_id)

    def forget(self, memory_id: str, *, actor: str | None = None, reason: str | None = None,
               viewer: Viewer | None = None) -> Memory:
        from kenning.memory import write

        self.get(memory_id, viewer)
        with timed("mutate"):
            return write.forget(self.db, memory_id, actor=actor, reason=reason)

    def recover(self, memory_id: str, *, actor: str | None = None, viewer: Viewer | None = None) -> Memory:
        from kenning.memory import write

        self.get(memory_id, viewer)
        with timed("mutate"):
            return write.recover(self.db, memory_id, actor=actor)

    def purge(self, memory_id: str, *, actor: str | None = None, reason: str | None = None,
              viewer: Viewer | None = None) -> None:
        """Gone for good: only its author may purge a memory (a token's user), others forget it."""
        from kenning.memory import write

        memory = self.get(memory_id, viewer)
        if viewer is not None and not viewer.sees_all and memory.author != viewer.user:
            raise InvalidInput(f"only its author ({memory.author}) may purge memory {memory_id}; forget it instead")
        with timed("mutate"):
            write.purge(self.db, memory_id, actor=actor, reason=reason)

    def sessions(self, *, limit: int = 50, offset: int = 0, project: str | None = None) -> SessionList:
        from kenning.sessions import views as session_views  # the session store's module loads numpy

        return session_views.session_list(self.db.reader(), limit=limit, offset=offset, project=project)

    def session(self, session_key: str) -> SessionDetail:
        from kenning.sessions import views as session_views

        return session_views.session_detail(self.db.reader(), session_key)

    # -- the code graph (kenning.codegraph): `kenning code …` offline, /api/code through the service --
    def code_impact(self, target: str, *, project: str | None = None, depth: int = 3,
                    cwd: str | None = None) -> ImpactReport:
        """What depends on `target` (a path, path:symbol or dotted name), its tests and linked memories."""
        from kenning.codegraph import impact

        return impact.impact(self.db.reader(), target, project=project, depth=depth, cwd=cwd)

    def code_memories(self, files: builtins.list[str], *, project: str | None = None, depth: int = 1,
                      limit: int = 20) -> dict[str, object]:
        """Memories attached to these files or their code neighbourhood, nearest first."""
        from kenning.codegraph import links

        return links.neighbourhood_memories(self.db.reader(), files, project=project, depth=depth, limit=limit)

    def code_modules(self, project: str | None, *, resolution: float = 1.0, cwd: str | None = None) -> dict[str, object]:
        """Module boundaries of `project` (or the only / the enclosing indexed one): Louvain communities."""
        from kenning.codegraph import impact, modules

        name = impact.choose_project(self.db.reader(), project, cwd)
        return modules.module_boundaries(self.db.reader(), name, resolution=resolution)

    def code_projects(self) -> dict[str, object]:
        from kenning.codegraph import views

        return views.projects(self.db.reader())

    def code_project_for_path(self, path: str) -> tuple[str, str] | None:
        """(project, root) of the indexed root holding `path`, or None."""
        from kenning.codegraph import views

        return views.project_for_path(self.db.reader(), path)

    def code_index(self, root: Path | str, project: str, *,
                   progress: Callable[[str, int, int], None] | None = None) -> IndexReport:
        """Index (or bring up to date) the source files under `root` as `project`."""
        from kenning.codegraph import indexer

        check_path("path", str(root))  # the CLI's offline index too: a 400-style error, never ENAMETOOLONG

        if progress is None:
            return indexer.index_path(self.db, root, project)
        return indexer.index_path(self.db, root, project, progress=progress)

    def code_refresh(self, project: str, files: builtins.list[str]) -> IndexReport:
        """Re-index a few changed files of an indexed project."""
        from kenning.codegraph import indexer

        for file in files:
            check_path("files", file)

        return indexer.refresh_files(self.db, project, files)

    # -- diagnostics (kenning.diagnostics): `kenning doctor` offline, /api/diagnostics through the service --
    def diagnostics(self, probes: Probes | None = None) -> dict[str, object]:
        """The health report; without live `probes` (no daemon), what the stored data tells."""
        from kenning.diagnostics import report

        return report.build_report(self.db, self.settings, probes or report.offline_probes(self.db, self.settings))

    def diagnostics_domain(self, domain: str, probes: Probes) -> DomainReport:
        from kenning.diagnostics import report

        return report.domain_report(report.gather_facts(self.db, self.settings, probes), domain)

    def repair(self, actions: builtins.list[str],
               embedder: EmbeddingProvider | None = None) -> builtins.list[Repaired]:
        """Safe repairs (rebuild the FTS index, embed memories lacking vectors); without an
        `embedder`, the configured one is built."""
        from kenning.diagnostics import repair
        from kenning.providers.registry import build_embedding_provider

        return repair.run(self.db, embedder if embedder is not None else build_embedding_provider(self.settings.embedding), actions)

    def timeline(self, ident: str, *, source: str | None = None, limit: int = 500,
                 offset: int = 0) -> Timeline:
        """History, jobs, logs, errors and predictor events of a session key or a memory id."""
        from kenning.diagnostics.timeline import build_timeline

        return build_timeline(self.db, ident, source=source, limit=limit, offset=offset)
