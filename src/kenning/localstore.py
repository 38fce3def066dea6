"""The store without the rest of the service: what the CLI's offline commands read and change.

`kenning list`, `show`, `stats`, `export`, `forget`, `recover`, `sessions` and `doctor` run without a
daemon on the data alone: they need neither the embedding model, the workers, the predictor nor the
session and observer components that `kenning.service.Kenning` builds, so they open the store here
and start in a fraction of the time. Everything that stores or searches memories goes through
`Kenning` (the write path with its rules and hooks, the model).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kenning.core.config import Settings
from kenning.core.errors import InvalidInput
from kenning.core.telemetry import timed
from kenning.core.types import Memory, MemoryFilter, Viewer
from kenning.memory import portable
from kenning.observer import lifecycle
from kenning.store import memories as store
from kenning.store.backend import StoreDatabase, describe, open_store


def open_local_store(settings: Settings) -> StoreDatabase:
    """The configured store (SQLite or PostgreSQL), migrated, without the rest of the service: for
    CLI commands that work on the data without a daemon and without the embedding model."""
    return open_store(settings.store, settings.db_path)


def stats(db: StoreDatabase, settings: Settings, model_id: str) -> dict[str, Any]:
    """Counts by type and project, where the store is and how big, and the embedding model's id."""
    data = store.stats(db.reader())
    data["embedding_model"] = model_id
    data["db_path"] = describe(settings.store, settings.db_path)
    data["db_bytes"] = settings.db_path.stat().st_size if settings.db_path.exists() else 0
    return data


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

    def history(self, memory_id: str, viewer: Viewer | None = None) -> list[dict[str, Any]]:
        self.get(memory_id, viewer)
        return store.history(self.db.reader(), memory_id)

    def lifecycle_of(self, memory: Memory) -> dict[str, Any]:
        """Trust level, decayed confidence, half-life and when pruning would take it (for `show`)."""
        return lifecycle.describe(memory, self.settings.observer.lifecycle)

    def list(self, filters: MemoryFilter | None = None, *, limit: int = 50,
             offset: int = 0) -> tuple[list[Memory], int]:
        return store.list_memories(self.db.reader(), filters, limit=limit, offset=offset)

    def export(self, fmt: str, filters: MemoryFilter | None = None) -> Iterator[str]:
        """Live, current memories as `fmt` text chunks (memory.portable), read page by page."""
        return portable.export_chunks(self.db.reader, fmt, filters)

    def stats(self) -> dict[str, Any]:
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

    def sessions(self, *, limit: int = 50, offset: int = 0, project: str | None = None) -> dict[str, Any]:
        from kenning.sessions import views as session_views  # the session store's module loads numpy

        return session_views.session_list(self.db.reader(), limit=limit, offset=offset, project=project)

    def session(self, session_key: str) -> dict[str, Any]:
        from kenning.sessions import views as session_views

        return session_views.session_detail(self.db.reader(), session_key)
