"""m008 (PostgreSQL only): the full-text sync triggers run at commit (deferred constraint triggers).

A memory's insert updates the full-text counters — `fts_totals` (documents, tokens) and the
per-lexeme counts in `{fts}_df` — and the row locks those updates take are held until the
transaction commits. Fired at the insert, they were held across the rest of the write (the
entity graph, the job queue, code links): with many writers on one database (two daemons, each
a pool of writers, 50 agents) memory inserts queued on them for 2.9 s on average at a million
memories (issue 36). Deferred to commit, they are held for the trigger's own statements only.
The trigger sees the row as it was at each change (OLD/NEW), so a row changed twice in one
transaction is indexed as before; only a full-text query inside the writing transaction no
longer sees that transaction's own new memories (readers never saw them before commit).
`store.pg.ddl.fts_sql` creates them so for new stores; this converts an existing store's.
"""

from kenning.store.pg.db import PgConnection

TABLES = ("memories_fts", "memory_hints_fts")


def up(conn: PgConnection) -> None:
    for fts_table in TABLES:
        rows = conn.raw.execute(
            "SELECT t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE NOT t.tgisinternal"
            " AND t.tgconstraint = 0 AND t.tgname LIKE %s", (f"{fts_table}\\_a_",)).fetchall()
        for name, definition in rows:
            table = definition.split(" ON ", 1)[1].split()[0]
            deferred = definition.replace("CREATE TRIGGER", "CREATE CONSTRAINT TRIGGER", 1).replace(
                " FOR EACH ROW", " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW", 1)
            conn.raw.execute(f"DROP TRIGGER {name} ON {table}")
            conn.raw.execute(deferred)
