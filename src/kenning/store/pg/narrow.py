"""The PostgreSQL connection behind the store's interface, for the branches under `is_postgres(conn)`.

store/ modules are written against `backend.Connection`; where SQL cannot be shared they branch on
`is_postgres(conn)` and call store.pg.search, whose functions take the concrete `PgConnection`.
`as_pg` is that narrowing, checked (a module of its own: importing it loads psycopg, which the
SQLite path never needs).
"""

from __future__ import annotations

from kenning.store.backend import Connection
from kenning.store.pg.db import PgConnection


def as_pg(conn: Connection) -> PgConnection:
    if not isinstance(conn, PgConnection):
        raise TypeError(f"not a PostgreSQL connection: {type(conn).__name__}")
    return conn
