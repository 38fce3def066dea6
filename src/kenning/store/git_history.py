"""All SQL on git history ingest state (git_repositories, git_commits; migration 025).

A repository is keyed by the absolute path of its work tree; a commit is ingested once per
repository, whatever happens to its memory later (a forgotten commit is not re-ingested).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypedDict, cast

from kenning.core.clock import now_iso
from kenning.store.backend import Connection


def ingested_shas(conn: Connection, repo: str) -> set[str]:
    return {r[0] for r in conn.execute("SELECT sha FROM git_commits WHERE repo = ?", (repo,))}


def record_commits(conn: Connection, repo: str, project: str | None, rows: Iterable[tuple[str, str, str]]) -> int:
    """Record (sha, memory_id, authored_at) rows as ingested; returns how many were new."""
    stamp = now_iso()
    conn.execute(
        "INSERT INTO git_repositories(repo, project, created_at) VALUES (?, ?, ?) ON CONFLICT(repo) DO NOTHING",
        (repo, project, stamp),
    )
    added = 0
    for sha, memory_id, authored_at in rows:
        cur = conn.execute(
            "INSERT OR IGNORE INTO git_commits(repo, sha, memory_id, authored_at, ingested_at)"
            " VALUES (?, ?, ?, ?, ?)", (repo, sha, memory_id, authored_at, stamp),
        )
        added += cur.rowcount
    conn.execute(
        "UPDATE git_repositories SET project = ?, last_ingested_at = ?,"
        " commit_count = (SELECT COUNT(*) FROM git_commits WHERE repo = ?) WHERE repo = ?",
        (project, stamp, repo, repo),
    )
    return added


class Repository(TypedDict):
    """An ingested git repository (git_repositories)."""

    repo: str
    project: str | None
    commit_count: int
    last_ingested_at: str | None
    created_at: str


def get_repository(conn: Connection, repo: str) -> Repository | None:
    row = conn.execute("SELECT * FROM git_repositories WHERE repo = ?", (repo,)).fetchone()
    return cast(Repository, dict(row)) if row else None


def list_repositories(conn: Connection) -> list[Repository]:
    return [cast(Repository, dict(r)) for r in conn.execute("SELECT * FROM git_repositories ORDER BY repo")]
