"""PostgreSQL twins of the SQLite migrations whose DDL cannot be translated (triggers, FTS5,
sqlite_master lookups), keyed by the same version; `m000` defines the SQLite functions the
store's SQL uses. Every other migration runs on Postgres as written, through
`store.pg.translate` (the runner in `store.migrations` does the merge). A twin may import the
SQLite migration it stands in for (its SCHEMA) and the shared DDL in `store.pg.ddl`."""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Callable

_NAME = re.compile(r"^m(\d{3})_(\w+)$")


def twins() -> dict[int, Callable[..., None]]:
    """version → up(conn) of each Postgres twin migration."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        match = _NAME.match(info.name)
        if match:
            found[int(match.group(1))] = importlib.import_module(f"{__name__}.{info.name}").up
    return found
