"""Read-only summaries of the code graph for the API, CLI and dashboard."""

from __future__ import annotations

from pathlib import Path

from kenning.store import codegraph as store
from kenning.store.backend import Connection


def projects(conn: Connection) -> dict:
    out = []
    for p in store.list_projects(conn):
        stats = store.graph_stats(conn, p["project"])
        out.append({"project": p["project"], "root": p["root"], "indexed_at": p["indexed_at"], **stats})
    return {"projects": out}


def project_for_path(conn: Connection, path: str) -> tuple[str, str] | None:
    """(project, root) of the indexed root holding `path` (the innermost one)."""
    target = str(Path(path).expanduser())
    best = None
    for p in store.list_projects(conn):
        root = p["root"].rstrip("/")
        if target == root or target.startswith(root + "/"):
            if best is None or len(root) > len(best[1]):
                best = (p["project"], root)
    return best
