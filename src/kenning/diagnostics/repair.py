"""Repairs behind `kenning doctor --fix` and POST /api/diagnostics/repair.

Only safe, idempotent fixes: rebuild the full-text index, embed live memories that lack a
vector. Embedding happens before the write transaction (never inside it).
"""

from __future__ import annotations

from typing import TypedDict

from kenning.core.errors import InvalidInput
from kenning.core.telemetry import log_event
from kenning.providers.embedding import EmbeddingProvider
from kenning.store import diagnostics as sql
from kenning.store import vectors
from kenning.store.backend import StoreDatabase

ACTIONS = ("rebuild_fts", "reembed")


class Repaired(TypedDict, total=False):
    """One repair's outcome (or why it was skipped)."""

    action: str
    fts_rows: int | None
    fts_missing: int
    model: str
    embedded: int
    skipped: str


def rebuild_fts(db: StoreDatabase) -> Repaired:
    with db.with_write_tx() as conn:
        sql.rebuild_fts(conn)
    with db.snapshot() as conn:
        stats = sql.index_stats(conn, None)
    log_event("diagnostics", "repair.rebuild_fts", fts_rows=stats["fts_rows"], fts_missing=stats["fts_missing"])
    return {"action": "rebuild_fts", "fts_rows": stats["fts_rows"], "fts_missing": stats["fts_missing"]}


def reembed(db: StoreDatabase, embedder: EmbeddingProvider, limit: int = 5000, batch: int = 64) -> Repaired:
    model = embedder.model_id
    missing = vectors.missing_embeddings(db.reader(), model, limit)
    done = 0
    for start in range(0, len(missing), batch):
        chunk = missing[start:start + batch]
        vecs = embedder.embed_many([content for _, content in chunk])
        with db.with_write_tx() as conn:
            for (content_hash, _), vec in zip(chunk, vecs):
                vectors.upsert_embedding(conn, content_hash, model, vec)
        done += len(chunk)
    log_event("diagnostics", "repair.reembed", model=model, embedded=done)
    return {"action": "reembed", "model": model, "embedded": done}


def run(db: StoreDatabase, embedder: EmbeddingProvider | None, actions: list[str]) -> list[Repaired]:
    unknown = [a for a in actions if a not in ACTIONS]
    if unknown:
        raise InvalidInput(f"unknown repair action(s) {unknown}; choose from {list(ACTIONS)}")
    out: list[Repaired] = []
    for action in actions:
        if action == "rebuild_fts":
            out.append(rebuild_fts(db))
        elif embedder is None:
            out.append({"action": action, "skipped": "no embedding provider in this process"})
        else:
            out.append(reembed(db, embedder))
    return out
