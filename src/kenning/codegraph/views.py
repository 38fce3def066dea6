"""Read-only summaries of the code graph for the API, CLI and dashboard."""

from __future__ import annotations

from kenning.store import codegraph as store


def projects(conn) -> dict:
    out = []
    for p in store.list_projects(conn):
        stats = store.graph_stats(conn, p["project"])
        out.append({"project": p["project"], "root": p["root"], "indexed_at": p["indexed_at"], **stats})
    return {"projects": out}
