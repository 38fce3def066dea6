"""Multi-statement SQL for migrations: split with SQLite's own statement-completeness test, and
run inside the current transaction (sqlite's `executescript` would commit first).

Its own module so the migrations (store/migrations, and store.pg.ddl for the Postgres twins) import it without
importing the database module that runs them."""

from __future__ import annotations

from collections.abc import Iterator

import sqlean

from kenning.store.backend import Connection


def statements(sql: str) -> Iterator[str]:
    """The complete statements in `sql`, in order, blank ones left out; ValueError at a trailing
    incomplete one (after the complete ones before it)."""
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlean.complete_statement(buffer):
            if buffer.strip():
                yield buffer
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL statement: {buffer[:80]!r}")


def execute_script(conn: Connection, sql: str) -> None:
    """Run several statements inside the current transaction (executescript would commit)."""
    for statement in statements(sql):
        conn.execute(statement)
