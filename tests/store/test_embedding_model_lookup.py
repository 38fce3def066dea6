"""The predictor's "which embedding model does this store use, and how wide" on both backends: the
model with the most vectors (the first name among equals), its width, read from m034's index on
embeddings(model, dims) instead of a GROUP BY over every vector (issue 36)."""

from __future__ import annotations

import numpy as np

from kenning.store import predictor as store
from kenning.store.vectors import upsert_embedding
from tests.store.plans import plan_of


def _store(db, model: str, dims: int, count: int, start: int = 0) -> None:
    with db.with_write_tx() as conn:
        for i in range(start, start + count):
            upsert_embedding(conn, f"hash-{i}", model, np.ones(dims, dtype=np.float32) / np.sqrt(dims))


def test_empty_store_has_no_model(db):
    conn = db.reader()
    assert store.stored_embedding_models(conn) == []
    assert store.embedding_model_in_use(conn) is None
    assert store.embedding_dims_in_use(conn) is None


def test_one_model_and_its_width(db):
    _store(db, "model-a", 8, 3)
    conn = db.reader()
    assert store.stored_embedding_models(conn) == ["model-a"]
    assert (store.embedding_model_in_use(conn), store.embedding_dims_in_use(conn)) == ("model-a", 8)


def test_while_a_model_change_re_embeds_the_model_with_most_vectors_wins(db):
    _store(db, "model-a", 8, 2)
    _store(db, "model-b", 4, 3, start=10)
    conn = db.reader()
    assert store.stored_embedding_models(conn) == ["model-a", "model-b"]
    assert (store.embedding_model_in_use(conn), store.embedding_dims_in_use(conn)) == ("model-b", 4)
    _store(db, "model-a", 8, 1, start=20)  # 3 and 3: the first name, as the GROUP BY it replaces ordered
    assert store.embedding_model_in_use(db.reader()) == "model-a"


def test_the_next_model_is_read_from_the_index(db):
    _store(db, "model-a", 8, 3)
    assert "idx_embeddings_model_dims" in plan_of(db, "SELECT MIN(model) FROM embeddings WHERE model > 'model-a'")
