"""Knowledge graph tables (memory-pipeline-v2 "Knowledge Graph", "Structural Classification").

- entities: one row per canonical name (lowercase, whitespace-collapsed); `mentions` is the
  number of memory_entity_mentions rows pointing at it, kept exact by triggers.
- relations: directed, typed edges; `confidence` is a running average over `mentions`.
- memory_entity_mentions: which memory mentions which entity (idempotent per pair).
- entity_aspects: named facets of an entity with a feedback-driven `weight`.
- entity_attributes: facts about an entity, kind 'attribute' or 'constraint'.
"""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE entities (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    canonical_name TEXT NOT NULL UNIQUE,
    entity_type TEXT NOT NULL DEFAULT 'unknown',
    mentions INTEGER NOT NULL DEFAULT 0,
    description TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_entities_mentions ON entities(mentions DESC);

CREATE TABLE relations (
    id TEXT PRIMARY KEY,
    source_entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    target_entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    relation_type TEXT NOT NULL,
    strength REAL NOT NULL DEFAULT 1.0,
    mentions INTEGER NOT NULL DEFAULT 1,
    confidence REAL NOT NULL DEFAULT 0.5 CHECK (confidence >= 0 AND confidence <= 1),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (source_entity_id, target_entity_id, relation_type)
);
CREATE INDEX idx_relations_target ON relations(target_entity_id);

CREATE TABLE memory_entity_mentions (
    memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    mention_text TEXT NOT NULL,
    confidence REAL NOT NULL DEFAULT 1.0,
    source TEXT NOT NULL DEFAULT 'linker',
    created_at TEXT NOT NULL,
    PRIMARY KEY (memory_id, entity_id)
);
CREATE INDEX idx_mentions_entity ON memory_entity_mentions(entity_id);

CREATE TRIGGER mentions_count_ai AFTER INSERT ON memory_entity_mentions BEGIN
    UPDATE entities SET mentions = mentions + 1 WHERE id = new.entity_id;
END;
CREATE TRIGGER mentions_count_ad AFTER DELETE ON memory_entity_mentions BEGIN
    UPDATE entities SET mentions = MAX(mentions - 1, 0) WHERE id = old.entity_id;
END;

CREATE TABLE entity_aspects (
    id TEXT PRIMARY KEY,
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    canonical_name TEXT NOT NULL,
    weight REAL NOT NULL DEFAULT 0.5,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (entity_id, canonical_name)
);

CREATE TABLE entity_attributes (
    id TEXT PRIMARY KEY,
    entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    aspect_id TEXT REFERENCES entity_aspects(id) ON DELETE SET NULL,
    memory_id TEXT REFERENCES memories(id) ON DELETE CASCADE,
    kind TEXT NOT NULL DEFAULT 'attribute' CHECK (kind IN ('attribute', 'constraint')),
    content TEXT NOT NULL,
    normalized_content TEXT NOT NULL,
    confidence REAL NOT NULL DEFAULT 0.5,
    importance REAL NOT NULL DEFAULT 0.5,
    status TEXT NOT NULL DEFAULT 'active',
    superseded_by TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (entity_id, memory_id, normalized_content)
);
CREATE INDEX idx_attributes_memory ON entity_attributes(memory_id);
CREATE INDEX idx_attributes_aspect ON entity_attributes(aspect_id);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
