"""The write path: validate → embed (outside any transaction) → one write tx → audit.

Raw-first: the caller's content is committed durably here, before any enrichment runs.
Other capabilities extend the path without editing it:
- `DRAFT_RULES`: fn(draft) -> draft, applied before storing (e.g. decision auto-protection);
- `IN_TX_HOOKS`: fn(conn, memory_id, draft), run inside the same write transaction for new
  memories (e.g. the inline entity linker, enqueueing an extraction job). They must be fast,
  deterministic and never touch the network.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from kenning.core.activity import note_bulk_write
from kenning.core import secrets
from kenning.core.errors import InvalidInput
from kenning.core.telemetry import record_error
from kenning.core.limits import MAX_CONTENT_CHARS, check_changes, check_draft
from kenning.core.text import normalize_content
from kenning.core.types import MEMORY_TYPES, SCOPES, Memory, MemoryDraft
from kenning.graph.linker import link_memory
from kenning.store import memories as store
from kenning.store import purge as purge_store
from kenning.store.db import savepoint
from kenning.store.vectors import upsert_embedding

DRAFT_RULES: list[Callable[[MemoryDraft], MemoryDraft]] = []
IN_TX_HOOKS: list[Callable[[Any, str, MemoryDraft], None]] = []


def link_entities(conn, memory_id: str, draft: MemoryDraft) -> None:
    """The inline entity linker, in its own savepoint: it can never fail the write it enriches."""
    try:
        with savepoint(conn, "entity_link"):
            link_memory(conn, memory_id, draft.content, draft.project)
    except Exception as exc:  # enrichment only: the memory is kept, its graph links are skipped
        record_error("graph", f"entity linking skipped: {exc}", memory_id=memory_id)


IN_TX_HOOKS.append(link_entities)


@dataclass
class RememberResult:
    id: str
    deduped: bool


def validate_draft(draft: MemoryDraft, max_chars: int = MAX_CONTENT_CHARS,
                   secret_policy: str = "redact") -> MemoryDraft:
    """Check a draft and apply the secrets policy (content, tags, metadata); returns the draft to store."""
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
    )
    for rule in DRAFT_RULES:
        draft = rule(draft)
    return draft


def _validate_all(drafts: list[MemoryDraft], max_chars: int, secret_policy: str) -> list[MemoryDraft]:
    """Validate every draft before anything is stored; the error names the failing item."""
    checked = []
    for number, draft in enumerate(drafts, start=1):
        try:
            checked.append(validate_draft(draft, max_chars, secret_policy))
        except InvalidInput as exc:
            if len(drafts) == 1:
                raise
            raise type(exc)(f"memory {number} of {len(drafts)}: {exc}; nothing was stored") from exc
    return checked


def remember_many(db, embedder, drafts: list[MemoryDraft], *, max_chars: int = MAX_CONTENT_CHARS,
                  actor: str | None = None, secret_policy: str = "redact",
                  embed: bool = True) -> list[RememberResult]:
    """Store many memories, all or none: validate all, embed outside the tx, commit in one transaction.

    `embed=False` stores them raw (no vector, `embedding_model` NULL) for the embedding tracker
    or the next local recall to embed: the CLI without a daemon uses it so that `remember`
    never loads the model.
    """
    drafts = _validate_all(drafts, max_chars, secret_policy)
    note_bulk_write(len(drafts))
    normalized = [normalize_content(d.content) for d in drafts]
    vectors = embedder.embed_many([n.storage for n in normalized]) if embed else [None] * len(drafts)
    model = embedder.model_id if embed else None
    results: list[RememberResult] = []
    with db.with_write_tx() as conn:
        for draft, norm, vector in zip(drafts, normalized, vectors):
            memory_id, deduped = store.insert_memory(conn, draft, embedding_model=model, actor=actor)
            if vector is not None:
                upsert_embedding(conn, norm.content_hash, embedder.model_id, vector)
            if not deduped:
                for hook in IN_TX_HOOKS:
                    hook(conn, memory_id, draft)
            results.append(RememberResult(memory_id, deduped))
    note_bulk_write(len(drafts))  # the hold counts from the end of the batch, however slow it was
    return results


def remember(db, embedder, draft: MemoryDraft, **kw) -> RememberResult:
    return remember_many(db, embedder, [draft], **kw)[0]


def edit(db, embedder, memory_id: str, changes: dict[str, Any], *, actor: str | None = None,
         reason: str | None = None, max_chars: int = MAX_CONTENT_CHARS, secret_policy: str = "redact") -> Memory:
    """Edit fields; new content is re-embedded before the transaction opens."""
    check_changes(changes)
    vector = None
    if "content" in changes:
        current = store.get_memory(db.reader(), memory_id)
        draft = validate_draft(replace(
            MemoryDraft(content=changes["content"]), type=changes.get("type", current.type),
            scope=changes.get("scope", current.scope),
        ), max_chars, secret_policy)
        changes = {**changes, "content": draft.content}
        vector = embedder.embed(normalize_content(draft.content).storage)
    elif "type" in changes and changes["type"] not in MEMORY_TYPES:
        raise InvalidInput(f"unknown memory type {changes['type']!r}")
    if "tags" in changes and isinstance(changes["tags"], list):
        changes = {**changes, "tags": [secrets.protect(t, secret_policy, what="tag") for t in changes["tags"]]}
    with db.with_write_tx() as conn:
        memory = store.update_memory(conn, memory_id, changes, actor=actor, reason=reason)
        if vector is not None:
            upsert_embedding(conn, memory.content_hash, embedder.model_id, vector)
            store.set_embedding_model(conn, memory_id, embedder.model_id)
    return memory


def forget(db, memory_id: str, *, actor: str | None = None, reason: str | None = None) -> Memory:
    with db.with_write_tx() as conn:
        return store.soft_delete(conn, memory_id, actor=actor, reason=reason)


def recover(db, memory_id: str, *, actor: str | None = None) -> Memory:
    with db.with_write_tx() as conn:
        return store.recover_memory(conn, memory_id, actor=actor)


def purge(db, memory_id: str, *, actor: str | None = None, reason: str | None = None) -> list[str]:
    """Remove the memory's content from the whole database (see store.purge), then the WAL."""
    with db.with_write_tx() as conn:
        ids = purge_store.purge_everywhere(conn, memory_id, actor=actor, reason=reason)
    db.checkpoint()
    return ids
