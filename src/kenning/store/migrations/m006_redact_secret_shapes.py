"""Re-redact what was stored before the scanner learned issue 33's shapes.

Issue 33 found secrets m005's scanner left: a JWT's signature after `[REDACTED:jwt]` (the plugin
matched two of its three segments), URL passwords with an empty user (`redis://:pw@host`),
`curl -u user:pw`, `--password pw`, `mysql -p…`, and a token typed as a project name (memories.project
was never scanned). This runs m005's sweep once more with today's scanner — every column m005
covers, the same history row per changed memory (its reason names this migration), the same FTS
optimize — and then scans the project (and source) columns m005 did not cover.

Idempotent: redacted text scans clean. Like m004/m005 it applies the scanner whatever `secrets:` says.
"""

from __future__ import annotations

from kenning.store.backend import Connection
from kenning.store.migrations import m005_redact_secrets_again as m005

REASON = "m006: secrets redacted by the scanner's rules of issue 33"
# table → the columns that name things (a project, a source): plain text, scanned here for the first time
NAMES: dict[str, tuple[str, ...]] = {
    "memories": ("project", "source"),
    "sessions": ("project",),
    "documents": ("project",),
    "predictor_session_context": ("project",),
    "observer_scratchpads": ("project",),
    "observer_signals": ("project",),
}


def up(conn: Connection) -> None:
    tables = m005._tables(conn)
    if "memories" not in tables:
        return  # fresh database: nothing stored yet
    last = conn.execute("SELECT coalesce(max(id), 0) FROM memory_history").fetchone()[0]
    m005.up(conn)
    conn.execute("UPDATE memory_history SET reason = ? WHERE id > ? AND reason = ?", (REASON, last, m005.REASON))
    sweep = m005.Sweep()
    for table, columns in NAMES.items():
        if table in tables:
            m005._redact_table(conn, sweep, table, columns, ())
