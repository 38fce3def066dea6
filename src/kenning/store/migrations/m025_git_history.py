"""Git history ingest state: which commits of which repository are already memories."""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
CREATE TABLE git_repositories (
    repo TEXT PRIMARY KEY,
    project TEXT,
    commit_count INTEGER NOT NULL DEFAULT 0,
    last_ingested_at TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE git_commits (
    repo TEXT NOT NULL,
    sha TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    authored_at TEXT NOT NULL,
    ingested_at TEXT NOT NULL,
    PRIMARY KEY (repo, sha)
);
CREATE INDEX idx_git_commits_memory ON git_commits(memory_id);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
