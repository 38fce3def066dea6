"""Predictor tables: comparisons (the seed's table, column for column), training log with
canary metrics, persistent alpha/EMA state, per-session scoring context, canary set,
judge calibration and the calibration-drift history.

The daemon writes all of these; the sidecar only reads (session_context, canary).
"""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE predictor_comparisons (
    id TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    predictor_ndcg REAL NOT NULL,
    baseline_ndcg REAL NOT NULL,
    predictor_won INTEGER NOT NULL,
    margin REAL NOT NULL,
    scorer_confidence REAL NOT NULL,
    ema_updated INTEGER NOT NULL,
    success_rate REAL NOT NULL,
    alpha REAL NOT NULL,
    predictor_top_ids TEXT NOT NULL,
    baseline_top_ids TEXT NOT NULL,
    relevance_scores TEXT NOT NULL,
    fts_overlap_score REAL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_predictor_comparisons_session ON predictor_comparisons(session_key);
CREATE INDEX idx_predictor_comparisons_created ON predictor_comparisons(created_at);

CREATE TABLE predictor_training_log (
    id INTEGER PRIMARY KEY,
    model_version INTEGER NOT NULL,
    trigger TEXT NOT NULL,
    loss REAL,
    step INTEGER NOT NULL DEFAULT 0,
    sample_count INTEGER NOT NULL DEFAULT 0,
    samples_skipped INTEGER NOT NULL DEFAULT 0,
    duration_ms REAL NOT NULL DEFAULT 0,
    canary_ndcg REAL,
    canary_ndcg_delta REAL,
    canary_score_variance REAL,
    canary_topk_churn REAL,
    canary_topk_overlap REAL,
    gates TEXT NOT NULL DEFAULT '{}',
    swapped INTEGER NOT NULL DEFAULT 0,
    train_validation_failures INTEGER NOT NULL DEFAULT 0,
    drift_resets INTEGER NOT NULL DEFAULT 0,
    loss_curve TEXT NOT NULL DEFAULT '[]',
    error TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_predictor_training_created ON predictor_training_log(created_at);

CREATE TABLE predictor_state (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE predictor_session_context (
    session_key TEXT PRIMARY KEY,
    project TEXT,
    context_text TEXT,
    embedding BLOB,
    embedding_dims INTEGER,
    alpha REAL NOT NULL DEFAULT 1.0,
    model_version INTEGER,
    scored INTEGER NOT NULL DEFAULT 0,
    latency_ms REAL,
    created_at TEXT NOT NULL
);

CREATE TABLE predictor_canary (
    session_key TEXT PRIMARY KEY,
    confidence REAL NOT NULL,
    added_at TEXT NOT NULL
);

CREATE TABLE predictor_calibration (
    id INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    human_label REAL NOT NULL,
    scorer_label REAL,
    delta REAL,
    created_at TEXT NOT NULL,
    UNIQUE (session_key, memory_id)
);

CREATE TABLE predictor_drift_signals (
    id INTEGER PRIMARY KEY,
    drift_signal REAL,
    recent_avg REAL,
    old_avg REAL,
    samples INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
