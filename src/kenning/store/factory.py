"""The one place that picks a backend: open (and migrate) the configured store, open an existing
one by location, say where it lives.

It imports both backends and the migration runner, so no store module imports it (they import
store.backend for the Connection protocols); the wiring, the local store, the predictor sidecar
and the tests do. The backends are imported when first asked for, so that a SQLite home never
loads psycopg.
"""

from __future__ import annotations

from pathlib import Path

from kenning.core.config_store import StoreSettings
from kenning.store.backend import StoreDatabase


def open_store(store: StoreSettings, sqlite_path: Path) -> StoreDatabase:
    """Open (creating if needed) and migrate the configured store."""
    from kenning.store.migrations import migrate

    if store.backend == "sqlite":
        from kenning.store.db import Database

        db: StoreDatabase = Database(sqlite_path)
    else:
        from kenning.store.pg.db import PostgresDatabase, require_pgvector

        db = PostgresDatabase(store.url or "")
        require_pgvector(db)
    migrate(db)
    return db


def open_location(location: str | Path, *, read_only: bool = False) -> StoreDatabase:
    """A handle on an existing store given as a SQLite file path or a postgresql:// URL (child
    processes such as the predictor sidecar get the location as an argument)."""
    text = str(location)
    if text.startswith(("postgresql://", "postgres://")):
        from kenning.store.pg.db import PostgresDatabase

        return PostgresDatabase(text, read_only=read_only)
    from kenning.store.db import Database

    return Database(Path(text), read_only=read_only)


def describe(store: StoreSettings, sqlite_path: Path) -> str:
    """Where the store lives, for status lines (no password)."""
    if store.backend == "sqlite":
        return str(sqlite_path)
    from kenning.store.pg.db import redacted

    return redacted(store.url or "")


__all__ = ["describe", "open_location", "open_store"]
