"""Portable memory files: what `kenning export` writes and `kenning import` reads.

Export formats: `json` (an array of memories), `jsonl` (one memory per line), `markdown` and
`claude-md` (a CLAUDE.md: constraints and decisions first, one `##` section per type, one bullet
per memory followed by a `<!-- kenning {...} -->` comment carrying its id, type, project, …).
Import formats: the same, plus `agents-md` (AGENTS.md) and `cursorrules` (`.cursorrules`,
`*.mdc`) — hand-written instruction files read with the markdown reader: each top-level bullet
(with its indented sub-lines) or paragraph is one memory, its type taken from the section heading;
a fenced code block joins the line right above it.

An export record carries its id, so importing it again — or into another home and back — finds
the memory by id and skips it ("deduped") instead of storing it twice.
Parsing only shapes records; the caller validates every record before storing any.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from dataclasses import dataclass
from typing import Any

from kenning.core.clock import now_iso
from kenning.core.errors import InvalidInput
from kenning.core.types import MEMORY_TYPES, Memory, MemoryFilter
from kenning.store import memories as store
from kenning.store.backend import Connection

EXPORT_FORMATS = ("json", "jsonl", "markdown", "claude-md")
IMPORT_FORMATS = ("json", "jsonl", "markdown", "claude-md", "agents-md", "cursorrules")
MARKDOWN_FORMATS = frozenset({"markdown", "claude-md", "agents-md", "cursorrules"})
MEDIA_TYPES = {"json": "application/json", "jsonl": "application/x-ndjson",
               "markdown": "text/markdown; charset=utf-8", "claude-md": "text/markdown; charset=utf-8"}
FILE_NAMES = {"json": "memories.json", "jsonl": "memories.jsonl", "markdown": "memories.md",
              "claude-md": "CLAUDE.md"}

# What an export record may hold besides a remember body: derived or runtime state the store
# computes itself, dropped on import (an unknown key is still an error).
EXPORT_ONLY_FIELDS = frozenset({
    "normalized_content", "content_hash", "related_modules", "needs_review", "user_verified",
    "superseded_by", "valid_until", "decay_half_life_days", "access_count", "last_accessed_at",
    "updated_at", "is_deleted", "deleted_at", "embedding_model", "extraction_model", "author", "team",
    "stale_at",
})
# The fields a markdown comment carries (content is the bullet itself).
COMMENT_FIELDS = ("id", "type", "project", "scope", "importance", "confidence", "tags", "pinned",
                  "source", "created_at")

FIRST_TYPES = ("constraint", "decision")
SECTION_TITLES = {"constraint": "Constraints", "decision": "Decisions", "gotcha": "Gotchas",
                  "preference": "Preferences", "procedural": "Procedures", "workflow_recipe": "Workflows",
                  "dead_end": "Dead ends", "error_pattern": "Error patterns", "fact": "Facts"}
# Section heading words → memory type, for hand-written files (first match wins).
HEADING_TYPES = (
    (("constraint", "rule", "must", "never", "don't", "do not", "guardrail", "requirement"), "constraint"),
    (("decision", "architecture"), "decision"),
    (("gotcha", "pitfall", "caveat", "warning", "known issue"), "gotcha"),
    (("dead end",), "dead_end"),
    (("error",), "error_pattern"),
    (("preference", "style", "convention"), "preference"),
    (("command", "workflow", "how to", "build", "test", "setup", "procedure", "run"), "procedural"),
    (("fact",), "fact"),
)

_COMMENT = re.compile(r"^\s*<!--\s*kenning\s+(\{.*\})\s*-->\s*$")
_ANY_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^([-*+]|\d{1,9}[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Record:
    """One memory read from a file: `where` names it in errors (a line number, or "item 3")."""

    where: str
    body: dict[str, Any]


# -- format detection ------------------------------------------------------------------
def detect_format(name: str, text: str) -> str:
    """From the file name first (CLAUDE.md, AGENTS.md, .cursorrules, *.jsonl …), else the content."""
    lower = name.lower()
    if lower.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if lower.endswith(".json"):
        return "json"
    if lower.startswith("claude") and lower.endswith(".md"):
        return "claude-md"
    if lower == "agents.md":
        return "agents-md"
    if lower == ".cursorrules" or lower.endswith(".mdc"):
        return "cursorrules"
    if lower.endswith((".md", ".markdown")):
        return "markdown"
    start = text.lstrip()[:1]
    if start == "[":
        return "json"
    if start == "{":
        return "jsonl"
    return "markdown"


# -- import -----------------------------------------------------------------------------
def parse(text: str, fmt: str) -> list[Record]:
    """Records of a file in `fmt`; InvalidInput names the line or item that is not well formed."""
    if fmt not in IMPORT_FORMATS:
        raise InvalidInput(f"unknown format {fmt!r}: use one of {', '.join(IMPORT_FORMATS)}")
    if fmt == "jsonl":
        return _parse_jsonl(text)
    if fmt == "json":
        return _parse_json(text)
    return _parse_markdown(text, fmt)


def import_body(record: Mapping[str, object]) -> dict[str, object]:
    """A remember body from an exported memory (or a hand-written one): the store's own derived
    fields are dropped; anything else is left for validation to accept or refuse."""
    body = {k: v for k, v in record.items() if k not in EXPORT_ONLY_FIELDS}
    if not body.get("derived_from"):
        body.pop("derived_from", None)
    if body.get("metadata") == {}:
        body.pop("metadata")
    return body


def _object(value: object, where: str) -> Record:
    if not isinstance(value, dict):
        raise InvalidInput(f"{where}: each record must be a JSON object with a string 'content'")
    return Record(where, import_body(value))


def _parse_jsonl(text: str) -> list[Record]:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{number}: not JSON ({exc.msg})") from exc
        records.append(_object(value, str(number)))
    return records


def _parse_json(text: str) -> list[Record]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{exc.lineno}: not JSON ({exc.msg})") from exc
    if isinstance(value, dict) and isinstance(value.get("memories"), list):
        value = value["memories"]
    if not isinstance(value, list):
        raise InvalidInput("1: a JSON export is an array of memory objects")
    return [_object(item, f"item {number}") for number, item in enumerate(value, start=1)]


def heading_type(title: str) -> str | None:
    """The memory type a hand-written section heading suggests ("## Rules" → constraint), or None."""
    lower = title.lower()
    for words, kind in HEADING_TYPES:
        if any(re.search(r"\b" + re.escape(word), lower) for word in words):
            return kind
    return None


def _parse_markdown(text: str, fmt: str) -> list[Record]:
    """Top-level bullets (with indented continuation) and paragraphs are memories; a fenced block
    joins the line right above it; a `<!-- kenning {...} -->` comment gives the memory before it its
    id and fields. Front matter and other comments are skipped."""
    lines = text.splitlines()
    start = _front_matter_end(lines)
    records: list[Record] = []
    section: str | None = None
    item: list[str] = []  # lines of the memory being read
    item_line = 0
    item_kind = ""  # "bullet" | "para"
    meta: dict[str, Any] = {}
    in_fence = False
    last_closed: Record | None = None

    def close() -> None:
        nonlocal item, meta, last_closed
        content = " ".join(_ANY_COMMENT.sub(" ", "\n".join(item)).split()).replace("&lt;!--", "<!--")
        if content:
            body: dict[str, Any] = {"content": content}
            kind = heading_type(section) if section else None
            if kind:
                body["type"] = kind
            body["source"] = f"import:{fmt}"
            body.update(meta)
            last_closed = Record(str(item_line), body)
            records.append(last_closed)
        item, meta = [], {}

    for number, line in enumerate(lines[start:], start=start + 1):
        if in_fence:
            item.append(line)
            if _FENCE.match(line):
                in_fence = False
            continue
        comment = _COMMENT.match(line)
        if comment:
            fields = _comment_fields(comment.group(1), number)
            if item:
                meta = fields
                close()
            elif last_closed is not None and not last_closed.body.get("id"):
                last_closed.body.update(fields)
            continue
        if _FENCE.match(line):
            if not item:
                item_line, item_kind = number, "para"
            item.append(line)
            in_fence = True
            continue
        if not line.strip():
            if item_kind == "para" and item:
                close()
            continue
        heading = _HEADING.match(line)
        if heading and not line.startswith((" ", "\t")):
            if item:
                close()
            section = heading.group(2)
            last_closed = None
            continue
        if re.fullmatch(r"\s*([-*_])(\s*\1){2,}\s*", line):  # horizontal rule
            if item:
                close()
            continue
        indented = line.startswith((" ", "\t"))
        bullet = _BULLET.match(line)
        if bullet and not indented:
            if item:
                close()
            item, item_line, item_kind = [bullet.group(2)], number, "bullet"
        elif item and (indented or item_kind == "para"):
            item.append(line)
        else:
            if item:
                close()
            item, item_line, item_kind = [line], number, "para"
    if item:
        close()
    return records


def _front_matter_end(lines: list[str]) -> int:
    if lines and lines[0].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index].strip() == "---":
                return index + 1
    return 0


def _comment_fields(raw: str, number: int) -> dict[str, object]:
    try:
        fields = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{number}: the kenning comment is not JSON ({exc.msg})") from exc
    if not isinstance(fields, dict):
        raise InvalidInput(f"{number}: the kenning comment must hold a JSON object")
    return {k: v for k, v in fields.items() if v is not None}


# -- export -----------------------------------------------------------------------------
def section_order(types: Iterable[str]) -> list[str]:
    """Constraints and decisions first, then the other types alphabetically."""
    present = set(types)
    return [t for t in FIRST_TYPES if t in present] + sorted(present - set(FIRST_TYPES))


def export_chunks(reader: Callable[[], Connection], fmt: str, filters: MemoryFilter | None = None,
                  *, page: int = 1000) -> Iterator[str]:
    """The export of every live, current memory matching `filters`, as text chunks, read a page
    at a time (`reader()` gives a read connection for each page)."""
    if fmt not in EXPORT_FORMATS:
        raise InvalidInput(f"unknown format {fmt!r}: use one of {', '.join(EXPORT_FORMATS)}")
    base = replace(filters or MemoryFilter(), include_deleted=False, include_superseded=False)

    def pages(f: MemoryFilter, order: str) -> Iterator[Memory]:
        offset = 0
        while True:
            items, _ = store.list_memories(reader(), f, limit=page, offset=offset, order=order)
            yield from items
            if len(items) < page:
                return
            offset += page

    if fmt == "json":
        yield from render_json(pages(base, "created_at ASC"))
    elif fmt == "jsonl":
        yield from render_jsonl(pages(base, "created_at ASC"))
    else:
        sections = ((kind, pages(replace(base, types=[kind]), "importance DESC"))
                    for kind in section_order(MEMORY_TYPES))
        yield from render_markdown(fmt, sections, project=base.project, generated_at=now_iso())


def render_json(memories: Iterable[Memory]) -> Iterator[str]:
    yield "["
    for index, memory in enumerate(memories):
        yield ("," if index else "") + "\n" + json.dumps(memory.to_dict(), default=str, ensure_ascii=False)
    yield "\n]\n"


def render_jsonl(memories: Iterable[Memory]) -> Iterator[str]:
    for memory in memories:
        yield json.dumps(memory.to_dict(), default=str, ensure_ascii=False) + "\n"


def render_markdown(fmt: str, sections: Iterable[tuple[str, Iterable[Memory]]], *,
                    project: str | None = None, generated_at: str = "") -> Iterator[str]:
    """`sections`: (type, its memories) in section_order; empty sections are left out."""
    what = (f"Project memory{f' for {project}' if project else ''} kept by kenning: constraints and decisions"
            " first, then the rest by type." if fmt == "claude-md" else "Memories kept by kenning, by type.")
    yield "# CLAUDE.md\n\n" if fmt == "claude-md" else "# kenning memories\n\n"
    yield (f"<!-- {what} Written by `kenning export --format {fmt}`{' at ' + generated_at if generated_at else ''};"
           " the comment under each memory holds its id, so `kenning import` skips what it already has. -->\n")
    for kind, memories in sections:
        title_written = False
        for memory in memories:
            if not title_written:
                yield f"\n## {SECTION_TITLES.get(kind, kind.replace('_', ' ').capitalize())}\n\n"
                title_written = True
            yield f"- {_escape_bullet(memory.content)}\n  <!-- kenning {_comment(memory)} -->\n"


def _escape_bullet(content: str) -> str:
    # Content is one line (the store collapses whitespace); a comment opener would end the item early.
    return content.replace("<!--", "&lt;!--")


def _comment(memory: Memory) -> str:
    data = {name: getattr(memory, name) for name in COMMENT_FIELDS}
    data = {k: v for k, v in data.items() if v not in (None, [], False)}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace(">", "\\u003e")
