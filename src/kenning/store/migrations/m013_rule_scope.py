"""Where a rule applies (issue 31): the columns the scope and staleness of a claim live in.

- memories.applies: 'project' (a convention that holds everywhere in its project: commit style,
  the test command, "never push to main") or 'area' (it is about one file, symbol, module, command
  or topic). NULL: not told (not a rule, or written before scoping): such a memory never opens a
  session; a query, a step or MCP still finds it.
- memories.area: the area's name for an 'area' rule, as a user reads it ("parse_quantity",
  "src/units.py", "tenant scheduling"); the code it is linked to is in related_files.
- memories.stale_at: when the code an area rule is linked to was deleted or renamed (the commit is in
  metadata.stale); a stale rule is held from unasked injection until the user confirms, edits or
  retires it in review.

Columns only: the data migration that scopes rules already stored is its own step (m014).
"""

from kenning.store.backend import Connection
from kenning.store.sql_script import execute_script

SCHEMA = """
ALTER TABLE memories ADD COLUMN applies TEXT;
ALTER TABLE memories ADD COLUMN area TEXT;
ALTER TABLE memories ADD COLUMN stale_at TEXT;
CREATE INDEX idx_memories_applies ON memories(project, applies);
"""


def up(conn: Connection) -> None:
    execute_script(conn, SCHEMA)
