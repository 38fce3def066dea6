"""What the observer borrows from the rest of the system, handed over by the service once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kenning.core.config_observer import ObserverSettings


@dataclass
class ObserverDeps:
    db: Any  # kenning.store.db.Database
    settings: ObserverSettings
    embedder: Any  # EmbeddingProvider: embed_many(), model_id
    remember_many: Callable[[list[Any]], list[Any]]  # (drafts) -> results with .id / .deduped (the write path)
    generate: Callable[[str], str] | None = None  # optional single LLM synthesis call per session
    on_file_changed: Callable[[str, str | None], None] | None = None  # (path, cwd): e.g. mark code-graph stale
