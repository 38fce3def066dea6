"""SQLite built-ins the store's SQL uses, defined in Postgres so its statements keep one text:
julianday, json_extract (text result; '$.a.b' paths), json_each over a JSON array (column
`value`), json_valid, instr (JSON_ARRAY is Postgres's own), two-argument max/min, sum over a boolean, and a
sqlite_master view of the tables and indexes (for existence checks)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kenning.store.pg.db import PgConnection

SQL = r"""
CREATE EXTENSION IF NOT EXISTS vector;
CREATE OR REPLACE FUNCTION julianday(t text) RETURNS double precision LANGUAGE sql IMMUTABLE AS
$$ SELECT extract(epoch FROM t::timestamptz) / 86400.0 + 2440587.5 $$;
CREATE OR REPLACE FUNCTION json_extract(doc text, path text) RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT doc::jsonb #>> string_to_array(substr(path, 3), '.') $$;
CREATE OR REPLACE FUNCTION json_valid(doc text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS
$$ BEGIN PERFORM doc::jsonb; RETURN true; EXCEPTION WHEN others THEN RETURN false; END $$;
CREATE OR REPLACE FUNCTION json_each(doc text) RETURNS TABLE(value text) LANGUAGE sql IMMUTABLE AS
$$ SELECT jsonb_array_elements_text(CASE WHEN jsonb_typeof(doc::jsonb) = 'array' THEN doc::jsonb ELSE '[]'::jsonb END) $$;
CREATE OR REPLACE FUNCTION instr(haystack text, needle text) RETURNS integer LANGUAGE sql IMMUTABLE AS
$$ SELECT strpos(haystack, needle) $$;
CREATE OR REPLACE FUNCTION max(a anycompatible, b anycompatible) RETURNS anycompatible LANGUAGE sql IMMUTABLE AS
$$ SELECT GREATEST(a, b) $$;
CREATE OR REPLACE FUNCTION min(a anycompatible, b anycompatible) RETURNS anycompatible LANGUAGE sql IMMUTABLE AS
$$ SELECT LEAST(a, b) $$;
CREATE OR REPLACE FUNCTION kenning_bool_sum(s bigint, v boolean) RETURNS bigint LANGUAGE sql IMMUTABLE AS
$$ SELECT s + COALESCE(v::int, 0) $$;
CREATE OR REPLACE AGGREGATE sum(boolean) (SFUNC = kenning_bool_sum, STYPE = bigint, INITCOND = '0');
CREATE OR REPLACE FUNCTION randomblob(n integer) RETURNS bytea LANGUAGE sql VOLATILE AS
$$ SELECT substring(uuid_send(gen_random_uuid()) FROM 1 FOR n) $$;
CREATE OR REPLACE FUNCTION hex(b bytea) RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT upper(encode(b, 'hex')) $$;
CREATE OR REPLACE VIEW sqlite_master AS
  SELECT CASE WHEN c.relkind = 'i' THEN 'index' WHEN c.relkind = 'v' THEN 'view' ELSE 'table' END AS type,
         c.relname::text AS name, NULL::text AS sql
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'i', 'v');
"""


def up(conn: PgConnection) -> None:
    conn.raw.execute(SQL)
