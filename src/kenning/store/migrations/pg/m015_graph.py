"""m015 on Postgres: the graph tables as in SQLite; the mention-count triggers in PL/pgSQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.store.pg.db import PgConnection

from kenning.store.migrations.m015_graph import SCHEMA
from kenning.store.pg.ddl import run_portable

TRIGGERS = r"""
CREATE FUNCTION mentions_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE entities SET mentions = mentions + 1 WHERE id = NEW.entity_id;
    ELSE
        UPDATE entities SET mentions = GREATEST(mentions - 1, 0) WHERE id = OLD.entity_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER mentions_count_ai AFTER INSERT ON memory_entity_mentions FOR EACH ROW EXECUTE FUNCTION mentions_count();
CREATE TRIGGER mentions_count_ad AFTER DELETE ON memory_entity_mentions FOR EACH ROW EXECUTE FUNCTION mentions_count();
"""


def up(conn: PgConnection) -> None:
    run_portable(conn, SCHEMA)
    conn.raw.execute(TRIGGERS)
