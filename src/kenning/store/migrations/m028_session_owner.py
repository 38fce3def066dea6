"""Session ownership on a team server (issue 26): sessions.owner is the user whose token opened
the session; another user's hook calls on that key are refused (403) and store nothing. NULL on
a single-user daemon (its one user owns every session) and for sessions from before."""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
ALTER TABLE sessions ADD COLUMN owner TEXT;
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
