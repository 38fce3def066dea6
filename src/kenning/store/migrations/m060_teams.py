"""Teams (issue 13): who wrote each memory, and per-user bearer tokens stored hashed.

- memories.author: the user who wrote it (a token's user on a team server, the OS user on a
  single-user daemon; NULL for memories written before this migration).
- memories.team: the writer's team on a team server; NULL means no team (the server's own user,
  or a single-user daemon), visible to every team unless personal.
- api_tokens: one row per token; only the sha256 of the secret is kept (`token_hash`), the
  secret itself is printed once by `kenning token create`. Revoked tokens keep their row.
"""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
ALTER TABLE memories ADD COLUMN author TEXT;
ALTER TABLE memories ADD COLUMN team TEXT;
CREATE INDEX idx_memories_author ON memories(author, scope);
CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    user_name TEXT NOT NULL,
    team TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE INDEX idx_api_tokens_user ON api_tokens(user_name);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
