"""What a worker factory may use, built by the service (workers never import it).

`WorkerDeps` replaces the whole service object the factories used to receive: each factory
takes exactly these typed parts, so a worker's needs are visible in its signature.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kenning.core.config import Settings
from kenning.memory.write import WritePath
from kenning.providers.embedding import EmbeddingProvider
from kenning.providers.llm import BaseLLMProvider
from kenning.sessions.context import RecallFn, SessionDeps
from kenning.store.backend import StoreDatabase
from kenning.workers.base import Worker


@dataclass(frozen=True)
class WorkerDeps:
    db: StoreDatabase
    settings: Settings
    embedder: EmbeddingProvider
    llm: BaseLLMProvider  # the pipeline LLM behind the daily token budget
    writer: WritePath  # the one write path of every memory
    recall: RecallFn  # hybrid recall without access tracking
    sessions: SessionDeps  # what the session summary worker runs with (the session manager's own)


WorkerFactory = Callable[[WorkerDeps], "Worker | None"]  # None when disabled by config
