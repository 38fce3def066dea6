"""Existing stores get the scope of their rules (issue 31): the data step after m013's columns.

Work in progress (31a): re-scopes stored rules with the same classifier the write path uses,
re-types commit subjects stored as constraint/decision to commits, and moves unresolved fragments
out of session start into review. Nothing is deleted; each change writes a memory_history row.
"""

from kenning.store.backend import Connection


def up(conn: Connection) -> None:
    """Reserved number; the data step lands in the next commit of issue 31."""
    return None
