"""Provenance: `memories.derived_from` lists the memories (episodes, raw memories) a memory was
derived from; backfilled from the pipeline's `metadata.source_memory_id`."""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
ALTER TABLE memories ADD COLUMN derived_from TEXT NOT NULL DEFAULT '[]';
UPDATE memories SET derived_from = json_array(json_extract(metadata, '$.source_memory_id'))
 WHERE json_extract(metadata, '$.source_memory_id') IS NOT NULL;
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
