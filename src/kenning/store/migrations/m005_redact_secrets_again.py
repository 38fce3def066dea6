"""Re-redact what was stored before the scanner's second set of rules (issue 26).

m004 redacted stored text with the scanner of its day. Issue 26 taught the scanner bare AWS
secret access keys, `id:secret` pairs and high-entropy tokens in assignment position, and put
the scanner in front of tables that were written unscanned (predictor_session_context,
sessions.context, the observer's scratchpads and signals). This runs `core.secrets` once more
over every column that can hold text a user, an agent or a tool wrote:

- memories (content + normalized content + hash, tags, metadata): the FTS triggers keep
  memories_fts in step, the old text's vector is deleted (the maintenance re-embedder embeds
  the redacted text), and each changed memory gets a memory_history row `redacted` naming the
  kinds found (never the old text);
- memory_history, hints (their FTS follows), entity attributes and descriptions, mentions,
  job payloads/results/errors, documents, sessions (context, status line, metadata), prompts
  (typed and injected), checkpoints, transcripts (sha256 and length follow), session scores,
  the predictor's context and evidence rows, the observer's scratchpads, signals and synthesis
  log, code-memory link reasons;
- an entity or aspect *named* after a secret, or after a `[REDACTED:…]` marker, is removed (the
  graph never carries a redacted name; the write path would not have created it), its mentions,
  attributes and relations with it.

Nothing else is deleted. JSON columns are redacted value by value so they stay JSON. FTS indexes
are optimized afterwards (SQLite) so no old term stays in a segment; `secure_delete` zeroes the
freed pages. Idempotent: redacted text scans clean. Like m004 it applies the scanner whatever
`secrets:` / `sessions.store_raw_transcripts` say (migrations do not see the settings).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from kenning.core.clock import now_iso
from kenning.core.secrets import MARKER_PREFIX, kinds, marker, redact, scan
from kenning.core.text import normalize_content
from kenning.store.backend import Connection, SqlValue, is_postgres

Clean = Callable[[str], str]  # one text in, the same text with secrets out

# table → (plain text columns, JSON columns)
COLUMNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "memory_history": (("old_content", "new_content", "reason"), ("changes",)),
    "memory_hints": (("hint",), ()),
    "memory_entity_mentions": (("mention_text",), ()),
    "memory_jobs": (("last_error",), ("payload", "result")),
    "entities": (("description",), ()),
    "documents": (("raw_content", "title", "source_url", "error"), ("tags",)),
    "sessions": (("context", "status_line"), ("metadata",)),
    "session_checkpoints": (("content",), ()),
    "session_prompts": (("prompt", "injected"), ()),
    "session_scores": (("missing_topics", "continuity_reasoning"), ()),
    "predictor_session_context": (("context_text",), ()),
    "predictor_session_evidence": ((), ("parts",)),
    "predictor_training_log": (("error",), ()),
    "observer_scratchpads": ((), ("state",)),
    "observer_signals": (("key",), ("detail", "files")),
    "observer_synthesis_log": ((), ("memories",)),
    "code_memory_links": (("reason",), ()),
}
REASON = "m005: secrets redacted by the scanner's newer rules"


def _tables(conn: Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _columns(conn: Connection, table: str) -> set[str]:
    return {str(d[0]) for d in conn.execute(f"SELECT * FROM {table} LIMIT 0").description or ()}


class Sweep:
    """The scanner run once over each text, remembering every secret value it finds (16+ chars),
    so a value found in one place is also taken out where it stands alone, without the label
    or the key id that gave it away (an entity name, a document title, a mention)."""

    MIN_KNOWN = 16

    def __init__(self) -> None:
        self.known: dict[str, str] = {}  # secret value → kind

    def text(self, text: str) -> str:
        if not isinstance(text, str) or not text:
            return text
        findings = scan(text)
        for f in findings:
            if f.end - f.start >= self.MIN_KNOWN:
                self.known.setdefault(text[f.start:f.end], f.kind)
        return redact(text) if findings else text

    def json(self, text: str) -> str:
        """A JSON document with every string in it redacted (plain text when it is not JSON)."""
        if not isinstance(text, str) or not scan(text):
            return text
        try:
            value = json.loads(text)
        except ValueError:
            return self.text(text)
        clean = json.dumps(self._value(value), default=str)
        return clean if not scan(clean) else self.text(clean)

    def _value(self, value: object) -> object:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self._value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._value(v) for v in value]
        return value

    def holds_known(self, text: object) -> bool:
        return isinstance(text, str) and any(v in text for v in self.known)

    def known_out(self, text: str) -> str:
        """`text` with each remembered secret value replaced by its marker."""
        if not isinstance(text, str):
            return text
        for value, kind in self.known.items():
            if value in text:
                text = text.replace(value, marker(kind))
        return text


def _redact_table(conn: Connection, sweep: Sweep, table: str, plain: tuple[str, ...], as_json: tuple[str, ...],
                  clean: Clean | None = None) -> int:
    present = _columns(conn, table)
    cols = [c for c in plain + as_json if c in present]
    if not cols:
        return 0
    changed = 0
    # rowid (ctid on Postgres, by the translator): these tables have no common key
    for row in conn.execute(f"SELECT rowid, {', '.join(cols)} FROM {table}").fetchall():
        sets: list[str] = []
        params: list[SqlValue] = []
        for column, text in zip(cols, tuple(row)[1:]):
            new = clean(text) if clean else (sweep.json(text) if column in as_json else sweep.text(text))
            if new != text:
                sets.append(f"{column} = ?")
                params.append(new)
        if sets:
            conn.execute(f"UPDATE {table} SET {', '.join(sets)} WHERE rowid = ?", (*params, row[0]))
            changed += 1
    return changed


def _memories(conn: Connection, sweep: Sweep, clean: Clean | None = None) -> int:
    changed = 0
    at = now_iso()
    for rid, memory_id, content, tags, metadata, old_hash in conn.execute(
            "SELECT rid, id, content, tags, metadata, content_hash FROM memories").fetchall():
        tags, metadata = tags or "[]", metadata or "{}"
        if clean:
            new, new_tags, new_meta = clean(content), clean(tags), clean(metadata)
            found = ["secret"]
        else:
            new, new_tags, new_meta = sweep.text(content), sweep.json(tags), sweep.json(metadata)
            found = kinds(content) + kinds(tags) + kinds(metadata)
        if new == content and new_tags == tags and new_meta == metadata:
            continue
        norm = normalize_content(new)
        conn.execute("UPDATE memories SET content = ?, normalized_content = ?, content_hash = ?, tags = ?,"
                     " metadata = ? WHERE rid = ?",
                     (norm.storage, norm.normalized, norm.content_hash, new_tags, new_meta, rid))
        if norm.content_hash != old_hash:
            conn.execute("DELETE FROM embeddings WHERE content_hash = ? AND NOT EXISTS"
                         " (SELECT 1 FROM memories WHERE content_hash = ?)", (old_hash, old_hash))
        conn.execute(
            "INSERT INTO memory_history(memory_id, event, old_content, new_content, changes, actor, reason, created_at)"
            " VALUES (?, 'redacted', NULL, ?, ?, 'migration', ?, ?)",
            (memory_id, norm.storage, json.dumps({"secrets": list(dict.fromkeys(found))}), REASON, at))
        changed += 1
    return changed


def _named_after_secrets(conn: Connection, sweep: Sweep, tables: set[str]) -> int:
    removed = 0
    for table in ("entities", "entity_aspects"):
        if table not in tables:
            continue
        for row_id, name, canonical in conn.execute(f"SELECT id, name, canonical_name FROM {table}").fetchall():
            named = f"{name or ''} {canonical or ''}"
            if not (scan(named) or MARKER_PREFIX in named or sweep.holds_known(named) or _inside_known(sweep, name)):
                continue
            if table == "entities":  # what the foreign keys cascade, spelled out for every backend
                for dependent, column in (("memory_entity_mentions", "entity_id"), ("entity_attributes", "entity_id"),
                                          ("relations", "source_entity_id"), ("relations", "target_entity_id")):
                    if dependent in tables:
                        conn.execute(f"DELETE FROM {dependent} WHERE {column} = ?", (row_id,))
            elif "entity_attributes" in tables:
                conn.execute("UPDATE entity_attributes SET aspect_id = NULL WHERE aspect_id = ?", (row_id,))
            conn.execute(f"DELETE FROM {table} WHERE id = ?", (row_id,))
            removed += 1
    return removed


def _inside_known(sweep: Sweep, name: object) -> bool:
    """A name of 8+ characters that is part of a secret value (an entity extracted from half a key)."""
    return isinstance(name, str) and len(name) >= 8 and any(name in v for v in sweep.known)


def _transcripts(conn: Connection, clean: Clean) -> int:
    changed = 0
    for key, text in conn.execute("SELECT session_key, transcript FROM session_transcripts").fetchall():
        new = clean(text)
        if new != text:
            conn.execute("UPDATE session_transcripts SET transcript = ?, sha256 = ?, chars = ? WHERE session_key = ?",
                         (new, hashlib.sha256(new.encode("utf-8")).hexdigest(), len(new), key))
            changed += 1
    return changed


def _attributes(conn: Connection, clean: Clean) -> int:
    changed = 0
    for attr_id, content in conn.execute("SELECT id, content FROM entity_attributes").fetchall():
        new = clean(content)
        if new != content:
            conn.execute("UPDATE entity_attributes SET content = ?, normalized_content = ? WHERE id = ?",
                         (new, new.lower(), attr_id))
            changed += 1
    return changed


def _pass(conn: Connection, sweep: Sweep, tables: set[str], clean: Clean | None = None) -> int:
    """One pass over every column: the scanner (clean None), or the remembered values (`clean`)."""
    changed = _memories(conn, sweep, clean)
    for table, (plain, as_json) in COLUMNS.items():
        if table in tables:
            changed += _redact_table(conn, sweep, table, plain, as_json, clean)
    if "entity_attributes" in tables:
        changed += _attributes(conn, clean or sweep.text)
    if "session_transcripts" in tables:
        changed += _transcripts(conn, clean or sweep.text)
    return changed


def up(conn: Connection) -> None:
    tables = _tables(conn)
    if "memories" not in tables:
        return  # fresh database: nothing stored yet
    sweep = Sweep()
    changed = _pass(conn, sweep, tables)  # the scanner, once over each text
    if sweep.known:  # then what it found, wherever else it stands alone (a substring test, no scan)
        changed += _pass(conn, sweep, tables, sweep.known_out)
    changed += _named_after_secrets(conn, sweep, tables)
    if changed and not is_postgres(conn):  # on Postgres the FTS side tables follow by trigger
        for table in ("memories_fts", "memory_hints_fts"):
            if table in tables:
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
