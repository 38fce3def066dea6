"""The write path: validate → embed (outside any transaction) → one write tx → audit.

Raw-first: the caller's content is committed durably here, before any enrichment runs.
Every memory is stored through one `WritePath` (remember, batches, document chunks,
pipeline facts, session summaries and episodes, observer promotions, git commits): dedup,
the secrets policy, the draft rules and the in-transaction hooks apply to all of them.
What extends the path is passed in explicitly by the service that builds it:
- `draft_rules`: fn(draft) -> draft, applied before storing (e.g. decision auto-protection);
- `in_tx_hooks`: fn(conn, memory_id, draft), run inside the same write transaction for new
  memories (the inline entity linker, enqueueing an extraction job, code links). They must
  be fast, deterministic and never touch the network.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from kenning.core.activity import bulk_write
from kenning.core import secrets
from kenning.core.errors import InvalidInput
from kenning.core.telemetry import record_error
from kenning.core.limits import MAX_CONTENT_CHARS, check_changes, check_draft
from kenning.core.text import normalize_content
from kenning.core.types import MEMORY_TYPES, SCOPES, Memory, MemoryDraft, Viewer
from kenning.graph.linker import link_memory
from kenning.providers.embedding import EmbeddingProvider
from kenning.store import memories as store
from kenning.store import purge as purge_store
from kenning.store.backend import Connection, StoreDatabase
from kenning.store.db import savepoint
from kenning.store.vectors import upsert_embedding

DraftRule = Callable[[MemoryDraft], MemoryDraft]


class InTxHook(Protocol):
    def __call__(self, conn: Connection, memory_id: str, draft: MemoryDraft) -> None: ...


def link_entities(conn: Connection, memory_id: str, draft: MemoryDraft) -> None:
    """The inline entity linker, in its own savepoint: it can never fail the write it enriches."""
    try:
        with savepoint(conn, "entity_link"):
            link_memory(conn, memory_id, draft.content, draft.project)
    except Exception as exc:  # enrichment only: the memory is kept, its graph links are skipped
        record_error("graph", f"entity linking skipped: {exc}", memory_id=memory_id)


@dataclass
class RememberResult:
    id: str
    deduped: bool


@dataclass(frozen=True)
class Prepared:
    """A validated draft with its vector, ready to be stored inside a write transaction."""
    draft: MemoryDraft
    content_hash: str
    vector: np.ndarray | None
    model: str | None


def validate_draft(draft: MemoryDraft, max_chars: int = MAX_CONTENT_CHARS,
                   secret_policy: str = "redact", rules: Sequence[DraftRule] = ()) -> MemoryDraft:
    """Check a draft and apply the secrets policy (content, tags, metadata, project, source: a token
    typed as a project name is no name, issue 33) and `rules`; returns the draft to store."""
    draft = check_draft(draft, max_chars)
    if draft.type not in MEMORY_TYPES:
        raise InvalidInput(f"unknown memory type {draft.type!r}; one of: {', '.join(sorted(MEMORY_TYPES))}")
    if draft.scope not in SCOPES:
        raise InvalidInput(f"unknown scope {draft.scope!r}; one of: {', '.join(sorted(SCOPES))}")
    for name in ("importance", "confidence"):
        value = getattr(draft, name)
        if not 0.0 <= float(value) <= 1.0:
            raise InvalidInput(f"{name} must be between 0 and 1, got {value}")
    draft = replace(
        draft, content=secrets.protect(draft.content, secret_policy),
        tags=[secrets.protect(t, secret_policy, what="tag") for t in draft.tags],
        metadata=secrets.protect_value(draft.metadata, secret_policy),
        project=secrets.protect(draft.project, secret_policy, what="project") if draft.project else draft.project,
        source=secrets.protect(draft.source, secret_policy, what="source") if draft.source else draft.source,
    )
    for rule in rules:
        draft = rule(draft)
    return draft


class WritePath:
    """The one way a memory is stored; built once by the service with its rules and hooks."""

    def __init__(self, db: StoreDatabase, embedder: EmbeddingProvider, *, max_chars: int = MAX_CONTENT_CHARS,
                 secret_policy: str = "redact", draft_rules: Sequence[DraftRule] = (),
                 in_tx_hooks: Sequence[InTxHook] = (link_entities,), default_writer: Viewer | None = None) -> None:
        self.db = db
        self.default_writer = default_writer  # author (and team) of drafts that name no writer
        self.embedder = embedder
        self.max_chars = max_chars
        self.secret_policy = secret_policy
        self.draft_rules = tuple(draft_rules)
        self.in_tx_hooks = tuple(in_tx_hooks)

    def validate(self, draft: MemoryDraft) -> MemoryDraft:
        return validate_draft(draft, self.max_chars, self.secret_policy, self.draft_rules)

    def _validate_all(self, drafts: list[MemoryDraft]) -> list[MemoryDraft]:
        """Validate every draft before anything is stored; the error names the failing item."""
        checked = []
        for number, draft in enumerate(drafts, start=1):
            try:
                checked.append(self.validate(draft))
            except InvalidInput as exc:
                if len(drafts) == 1:
                    raise
                raise type(exc)(f"memory {number} of {len(drafts)}: {exc}; nothing was stored") from exc
        return checked

    def prepare(self, drafts: list[MemoryDraft], *, embed: bool = True,
                vectors: dict[str, np.ndarray] | None = None) -> list[Prepared]:
        """Validate all drafts, then embed them (outside any transaction). `vectors` (keyed by
        content hash) supplies vectors computed earlier; `embed=False` stores the drafts raw."""
        drafts = self._validate_all([d if d.writer or self.default_writer is None
                                     else replace(d, writer=self.default_writer) for d in drafts])
        normalized = [normalize_content(d.content) for d in drafts]
        if vectors is not None:
            found = [vectors.get(n.content_hash) for n in normalized]
        elif embed and drafts:
            found = list(self.embedder.embed_many([n.storage for n in normalized]))
        else:
            found = [None] * len(drafts)
        model = self.embedder.model_id
        return [Prepared(d, n.content_hash, v, model if v is not None else None)
                for d, n, v in zip(drafts, normalized, found)]

    def store(self, conn: Connection, item: Prepared, *, actor: str | None = None) -> RememberResult:
        """Insert one prepared memory inside the caller's write transaction (dedup by content
        hash; the vector and the in-transaction hooks for a new memory)."""
        if item.vector is not None:  # first: on PostgreSQL the memory's insert takes the full-text
            # counters' row locks (store/pg/ddl.py) until commit, and an HNSW insert is the slow step
            upsert_embedding(conn, item.content_hash, self.embedder.model_id, item.vector)
        memory_id, deduped = store.insert_memory(conn, item.draft, embedding_model=item.model, actor=actor)
        if not deduped:
            for hook in self.in_tx_hooks:
                hook(conn, memory_id, item.draft)
        return RememberResult(memory_id, deduped)

    def remember_many(self, drafts: list[MemoryDraft], *, actor: str | None = None,
                      embed: bool = True) -> list[RememberResult]:
        """Store many memories, all or none: validate all, embed outside the tx, commit in one transaction.

        `embed=False` stores them raw (no vector, `embedding_model` NULL) for the embedding tracker
        or the next local recall to embed: the CLI without a daemon uses it so that `remember`
        never loads the model.
        """
        items = self.prepare(drafts, embed=embed)
        with bulk_write(len(items)), self.db.with_write_tx() as conn:  # a large batch holds the workers
            results = [self.store(conn, item, actor=actor) for item in items]
        return results

    def remember(self, draft: MemoryDraft, *, actor: str | None = None, embed: bool = True) -> RememberResult:
        return self.remember_many([draft], actor=actor, embed=embed)[0]

    def edit(self, memory_id: str, changes: Mapping[str, object], *, actor: str | None = None,
             reason: str | None = None) -> Memory:
        """Edit fields; new content is re-embedded before the transaction opens."""
        check_changes(changes)
        vector = None
        if "content" in changes:
            current = store.get_memory(self.db.reader(), memory_id)
            content, kind, scope = changes["content"], changes.get("type", current.type), changes.get("scope", current.scope)
            if not (isinstance(content, str) and isinstance(kind, str) and isinstance(scope, str)):
                raise InvalidInput("content, type and scope must be strings")
            draft = validate_draft(replace(MemoryDraft(content=content), type=kind, scope=scope),
                                   self.max_chars, self.secret_policy)
            changes = {**changes, "content": draft.content}
            vector = self.embedder.embed(normalize_content(draft.content).storage)
        elif "type" in changes and changes["type"] not in MEMORY_TYPES:
            raise InvalidInput(f"unknown memory type {changes['type']!r}")
        if "tags" in changes and isinstance(changes["tags"], list):
            changes = {**changes, "tags": [secrets.protect(t, self.secret_policy, what="tag")
                                           for t in changes["tags"]]}
        for name in ("project", "metadata"):  # a token in any field (issue 33)
            if changes.get(name):
                changes = {**changes, name: secrets.protect_value(changes[name], self.secret_policy, what=name)}
        with self.db.with_write_tx() as conn:
            memory = store.update_memory(conn, memory_id, changes, actor=actor, reason=reason)
            if vector is not None:
                upsert_embedding(conn, memory.content_hash, self.embedder.model_id, vector)
                store.set_embedding_model(conn, memory_id, self.embedder.model_id)
        return memory


def forget(db: StoreDatabase, memory_id: str, *, actor: str | None = None, reason: str | None = None) -> Memory:
    with db.with_write_tx() as conn:
        return store.soft_delete(conn, memory_id, actor=actor, reason=reason)


def recover(db: StoreDatabase, memory_id: str, *, actor: str | None = None) -> Memory:
    with db.with_write_tx() as conn:
        return store.recover_memory(conn, memory_id, actor=actor)


def purge(db: StoreDatabase, memory_id: str, *, actor: str | None = None, reason: str | None = None) -> list[str]:
    """Remove the memory's content from the whole database (see store.purge), then the WAL."""
    with db.with_write_tx() as conn:
        ids = purge_store.purge_everywhere(conn, memory_id, actor=actor, reason=reason)
    # a purge promises no trace on disk: wait up to 10 s (not the default 2 s) for readers that pin the WAL — with
    # recall's legs on pool threads a busy daemon has more of them (a fresh-clone run failed test_purge once)
    db.checkpoint(attempts=200)
    return ids
