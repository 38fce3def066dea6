"""Existing stores get the scope of their rules (issue 31): the data step after m013's columns.

For every live memory written before scoping (nothing is deleted; each change is an update with its
memory_history row, actor 'migration m014'):
- a git commit (source 'git') typed fact / constraint / decision becomes type `commit` (what was done,
  found by a query, never shown as a rule: auto-protection had typed "switch to monotonic time" constraint);
- a rule (core.claims.RULE_TYPES) with no scope gets applies / area from the write path's classifier
  (core.rule_scope.stored_scope); when it is linked to indexed code (code_memory_links with a symbol), its
  area is that symbol and the linked files join related_files;
- a rule that is an unresolved fragment (core.claims.unresolved_fragment: "Case-INSENSITIVE, always.",
  "Ship it. (after: …)") leaves session start for review: needs_review = 1, applies NULL,
  metadata.fragment = true. A pinned or user-verified rule keeps its standing (the user's word).
"""

from __future__ import annotations


from kenning.core import claims
from kenning.core.rule_scope import stored_scope
from kenning.store.backend import Connection
from kenning.store.memories import row_to_memory, update_memory

ACTOR = "migration m014"
COMMIT_TYPE = "commit"


def _marks(n: int) -> str:
    return ",".join("?" * n)


def up(conn: Connection) -> None:
    for (memory_id,) in conn.execute(
        "SELECT id FROM memories WHERE is_deleted = 0 AND source = 'git' AND type IN ('fact', 'constraint', 'decision')"
    ).fetchall():
        update_memory(conn, memory_id, {"type": COMMIT_TYPE}, actor=ACTOR,
                      reason="a commit records what was done: type commit, not a rule (issue 31)")
    rows = conn.execute(
        f"SELECT * FROM memories WHERE is_deleted = 0 AND applies IS NULL AND type IN ({_marks(len(claims.RULE_TYPES))})",
        list(claims.RULE_TYPES),
    ).fetchall()
    for memory in [row_to_memory(r) for r in rows]:
        meta = dict(memory.metadata or {})
        evidence = meta.get(claims.EVIDENCE_KEY)
        antecedent = evidence.get("antecedent") if isinstance(evidence, dict) else None
        changes: dict[str, object] = {}
        if claims.unresolved_fragment(memory.content) and not (memory.pinned or memory.user_verified):
            changes = {"needs_review": True, "metadata": {**meta, "fragment": True}}
            reason = "an unresolved fragment: out of session start, into review (issue 31)"
        else:
            scope = stored_scope(memory.content, antecedent if isinstance(antecedent, str) else None)
            changes = {"applies": scope.applies, "area": (scope.area or "").strip() or None,
                       "metadata": {**meta, "scope": {"reason": scope.reason, "ruleset": claims.SCOPE_RULESET}}}
            links = conn.execute("SELECT path, symbol FROM code_memory_links WHERE memory_id = ? ORDER BY symbol DESC, path",
                                 (memory.id,)).fetchall()
            if links and scope.applies != "project":
                symbols = [r[1] for r in links if r[1]]
                changes["applies"], changes["area"] = "area", symbols[0] if symbols else links[0][0]
                changes["related_files"] = list(dict.fromkeys([*memory.related_files, *(r[0] for r in links)]))
            reason = f"scoped: {changes['applies'] or 'not told'} (issue 31)"
        update_memory(conn, memory.id, changes, actor=ACTOR, reason=reason)
