"""Input limits (SPEC S10) in one place: sizes, visible content, sane dates, sane JSON.

The API's pydantic models use these constants for their schemas, and `check_draft` runs on
every write path (HTTP, CLI, MCP through the daemon, import), so each rule is stated once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from kenning.core.clock import parse_iso, to_iso, utcnow
from kenning.core.errors import InvalidInput
from kenning.core.types import MemoryDraft

MAX_CONTENT_CHARS = 100_000
MAX_TAGS = 64
MAX_TAG_CHARS = 100
MAX_PROJECT_CHARS = 200
MAX_SCOPE_CHARS = 50
MAX_SOURCE_CHARS = 200
MAX_SESSION_KEY_CHARS = 200
MAX_QUERY_CHARS = 10_000
MAX_RELATED_FILES = 256
MAX_PATH_CHARS = 1024
MAX_METADATA_BYTES = 16_384
MAX_JSON_DEPTH = 32
MEMORY_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"  # an id a caller (an import) may choose
MAX_OFFSET = 2**63 - 1  # SQLite integers are signed 64-bit
EARLIEST = datetime(1970, 1, 1, tzinfo=timezone.utc)
FUTURE_SLACK = timedelta(days=1)

# Characters that print nothing: C0/C1 controls, spaces of every width, zero-width and
# joiner characters, bidi marks, BOM, Hangul/Braille blanks, variation selectors.
# Written as regex escapes so the same text is a JSON Schema (ECMA) pattern, a Rust regex
# (pydantic) and a Python regex.
INVISIBLE_CHARS = (
    r"\x00-\x20\x7f-\xa0\xad\u034f\u061c\u115f\u1160\u1680\u17b4\u17b5\u180b-\u180f"
    r"\u2000-\u200f\u2028-\u202f\u205f-\u206f\u2800\u3000\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
)
VISIBLE_PATTERN = f"[^{INVISIBLE_CHARS}]"
_VISIBLE = re.compile(VISIBLE_PATTERN)
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def is_visible(text: str) -> bool:
    """True when `text` holds at least one character that prints."""
    return _VISIBLE.search(text) is not None


def has_lone_surrogate(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def json_depth(body: bytes) -> int:
    """Deepest array/object nesting of a JSON text (strings skipped), without parsing it."""
    structure = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    if len(structure) <= 2 * MAX_JSON_DEPTH:
        return (len(structure) + 1) // 2  # never deeper than its number of bracket pairs
    depth = deepest = 0
    for byte in structure:
        depth += 1 if byte in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


def json_body_problem(body: bytes) -> str | None:
    """Why a JSON request body is refused before parsing (too deep, lone surrogates), or None."""
    if json_depth(body) > MAX_JSON_DEPTH:
        return f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
    if _SURROGATE_ESCAPE.search(body):
        try:
            json.dumps(json.loads(body), ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return "text holds a lone UTF-16 surrogate (\\ud800-\\udfff); send valid Unicode"
        except (ValueError, RecursionError):
            return None  # not JSON: the route's own parser says so
    return None


FS_PATH_MAX = 4096  # bytes of a path the file system takes whole (Linux PATH_MAX, with its NUL)
FS_NAME_MAX = 255  # bytes of one path component (NAME_MAX)


def check_path(name: str, value: object) -> str:
    """A path argument (a caller's folder or file, untrusted), checked before any file-system call:
    a string without NUL bytes the file system can take — under FS_PATH_MAX bytes, no component over
    FS_NAME_MAX — so a path that is too long is a 400 naming the rule, never ENAMETOOLONG as a 500
    (issue 33)."""
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{name} must be a non-empty path")
    if "\x00" in value:
        raise InvalidInput(f"{name} holds a NUL byte")
    size = len(value.encode("utf-8", "surrogatepass"))
    if size >= FS_PATH_MAX:
        raise InvalidInput(f"{name} is {size} bytes; the file system takes paths under {FS_PATH_MAX} (ENAMETOOLONG)")
    longest = max(value.split("/"), key=lambda part: len(part.encode("utf-8", "surrogatepass")))
    if len(longest.encode("utf-8", "surrogatepass")) > FS_NAME_MAX:
        raise InvalidInput(f"{name} has a component of {len(longest.encode('utf-8', 'surrogatepass'))} bytes; "
                           f"the file system takes at most {FS_NAME_MAX} (ENAMETOOLONG)")
    return value


def check_text(name: str, value: object, max_chars: int, *, visible: bool = False) -> None:
    """`value` (from a caller: untrusted) is None or a string within the limits."""
    if value is None:
        return
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string")
    if len(value) > max_chars:
        raise InvalidInput(f"{name} is {len(value)} characters; the limit is {max_chars}")
    if has_lone_surrogate(value):
        raise InvalidInput(f"{name} holds a lone UTF-16 surrogate; send valid Unicode")
    if visible and not is_visible(value):
        raise InvalidInput(f"{name} has no visible characters (only whitespace, control or zero-width)")


def check_created_at(value: str | datetime | None, name: str = "created_at") -> str | None:
    """ISO UTC between 1970 and one day from now; None stays None."""
    if value is None:
        return None
    try:
        when = parse_iso(value).astimezone(timezone.utc)
    except OverflowError as exc:
        raise InvalidInput(f"{name} {value} is outside the calendar") from exc
    latest = utcnow() + FUTURE_SLACK
    if not EARLIEST <= when <= latest:
        raise InvalidInput(f"{name} {to_iso(when)} is outside 1970-01-01 .. {to_iso(latest)}")
    return to_iso(when)


def check_metadata(metadata: object) -> None:
    """`metadata` (from a caller: untrusted) is a JSON object within MAX_METADATA_BYTES."""
    if not isinstance(metadata, dict):
        raise InvalidInput("metadata must be a JSON object")
    try:
        size = len(json.dumps(metadata, ensure_ascii=False).encode("utf-8"))
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInput(f"metadata is not plain JSON: {exc}") from exc
    except UnicodeEncodeError as exc:
        raise InvalidInput("metadata holds a lone UTF-16 surrogate; send valid Unicode") from exc
    if size > MAX_METADATA_BYTES:
        raise InvalidInput(f"metadata is {size} bytes as JSON; the limit is {MAX_METADATA_BYTES}")


def check_draft(draft: MemoryDraft, max_chars: int = MAX_CONTENT_CHARS) -> MemoryDraft:
    """Every size/character/date rule of a memory; returns it with created_at normalised."""
    if not isinstance(draft.content, str) or not draft.content.strip():
        raise InvalidInput("content must be a non-empty string")
    check_text("content", draft.content, max_chars, visible=True)
    check_changes({"tags": draft.tags, "project": draft.project, "source": draft.source})
    check_text("session_key", draft.session_key, MAX_SESSION_KEY_CHARS)
    for field in ("related_files", "related_modules"):
        paths = getattr(draft, field)
        if len(paths) > MAX_RELATED_FILES:
            raise InvalidInput(f"{field} has {len(paths)} entries; the limit is {MAX_RELATED_FILES}")
        for path in paths:
            check_text(f"each of {field}", path, MAX_PATH_CHARS)
    check_metadata(draft.metadata)
    if draft.id is not None and not (isinstance(draft.id, str) and re.fullmatch(MEMORY_ID_PATTERN, draft.id)):
        raise InvalidInput(f"id {draft.id!r}: use 1-64 letters, digits, '_', '.', ':' or '-'")
    created_at = check_created_at(draft.created_at)
    return draft if created_at == draft.created_at else replace(draft, created_at=created_at)


def check_changes(changes: Mapping[str, object]) -> None:
    """The limits of `check_draft` for the plain fields an edit changes (content: validate_draft)."""
    if "tags" in changes:
        tags = changes["tags"]
        if not isinstance(tags, list) or len(tags) > MAX_TAGS:
            raise InvalidInput(f"tags must be a list of at most {MAX_TAGS} strings")
        for tag in tags:
            check_text("each tag", tag, MAX_TAG_CHARS, visible=True)
    check_text("project", changes.get("project"), MAX_PROJECT_CHARS)
    check_text("source", changes.get("source"), MAX_SOURCE_CHARS)
