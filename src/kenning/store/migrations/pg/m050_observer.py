"""m050 on Postgres: the observer tables as in SQLite; memory_lookup's triggers in PL/pgSQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.store.pg.db import PgConnection

from kenning.store.migrations.m050_observer import SCHEMA
from kenning.store.pg.ddl import run_portable

TRIGGERS = r"""
CREATE FUNCTION memory_lookup_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        DELETE FROM memory_lookup WHERE memory_id = OLD.id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO memory_lookup(key, memory_id)
            SELECT 'file:' || value, NEW.id FROM json_each(CASE WHEN json_valid(NEW.related_files)
                THEN NEW.related_files ELSE '[]' END);
        INSERT INTO memory_lookup(key, memory_id)
            SELECT value, NEW.id FROM json_each(CASE WHEN json_valid(NEW.metadata)
                THEN COALESCE(NEW.metadata::jsonb -> 'lookup_keys', '[]')::text ELSE '[]' END);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER memory_lookup_ai AFTER INSERT ON memories FOR EACH ROW EXECUTE FUNCTION memory_lookup_sync();
CREATE TRIGGER memory_lookup_au AFTER UPDATE OF related_files, metadata ON memories
    FOR EACH ROW EXECUTE FUNCTION memory_lookup_sync();
CREATE TRIGGER memory_lookup_ad AFTER DELETE ON memories FOR EACH ROW EXECUTE FUNCTION memory_lookup_sync();
"""


def up(conn: PgConnection) -> None:
    run_portable(conn, SCHEMA.split("INSERT INTO memory_lookup(key, memory_id)\n    SELECT 'file:'")[0])
    conn.raw.execute(TRIGGERS)
