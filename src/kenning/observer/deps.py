"""What the observer borrows from the rest of the system, handed over by the service once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kenning.core.config_observer import ObserverSettings
from kenning.core.config_sessions import RankingSettings
from kenning.core.types import MemoryDraft
from kenning.providers.embedding import EmbeddingProvider
from kenning.sessions.context import Stored
from kenning.store.backend import StoreDatabase


@dataclass
class ObserverDeps:
    db: StoreDatabase
    settings: ObserverSettings
    embedder: EmbeddingProvider
    remember_many: Callable[[list[MemoryDraft]], Sequence[Stored]]  # the write path, one write tx
    generate: Callable[[str], str] | None = None  # optional single LLM synthesis call per session
    ranking: RankingSettings = field(default_factory=RankingSettings)  # sessions.ranking: what steps may show
