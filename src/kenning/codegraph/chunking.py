"""AST chunking of source files for document ingest: one chunk per function or class (a class
too large for one chunk becomes its header plus one chunk per method), module-level code
between definitions grouped into its own chunks, each headed `path:symbol (lines a-b)`, so
a recalled chunk says where it lives. Character windows only for a single definition larger
than twice the chunk size.
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.codegraph import lang_go, lang_js, lang_python, lang_rust
from kenning.codegraph.facts import Definition, FileFacts
from kenning.codegraph.languages import JS_FAMILY, language_of

_LEADING = ("@", "#", "//", "/*", "*", "///", "#[")
MIN_GAP_CHARS = 20


@dataclass(frozen=True)
class CodeChunk:
    symbol: str      # qualname, or "" for module-level code
    start: int       # 1-based lines, inclusive
    end: int
    text: str        # header line + code


def _facts(path: str, language: str, source: bytes) -> FileFacts:
    if language == "python":
        return lang_python.extract(source, "", False)
    if language in JS_FAMILY:
        return lang_js.extract(source, language, path)
    if language == "go":
        return lang_go.extract(source, path, None)
    return lang_rust.extract(source, "crate", "crate")


def _with_leading(lines: list[str], start: int, floor: int) -> int:
    """Move a definition's first line up over its decorators / doc comments."""
    while start - 1 > floor and lines[start - 2].lstrip().startswith(_LEADING):
        start -= 1
    return start


def _pieces(path: str, symbol: str, lines: list[str], start: int, end: int, size: int) -> list[CodeChunk]:
    body = "\n".join(lines[start - 1:end]).rstrip()
    if not body.strip() or not symbol and len(body.strip().strip("{}();")) < MIN_GAP_CHARS:
        return []  # blank lines, a lone `impl X {` / `}` between definitions
    label = f"{path}:{symbol}" if symbol else path
    if len(body) <= 2 * size:
        return [CodeChunk(symbol, start, end, f"{label} (lines {start}-{end})\n{body}")]
    out, first = [], start
    while first <= end:  # whole lines, about `size` characters each
        last, used = first, 0
        while last <= end and (used == 0 or used + len(lines[last - 1]) + 1 <= size):
            used += len(lines[last - 1]) + 1
            last += 1
        text = "\n".join(lines[first - 1:last - 1])
        out.append(CodeChunk(symbol, first, last - 1, f"{label} (lines {first}-{last - 1})\n{text}"))
        first = last
    return out


def chunk_code(path: str, text: str, size: int = 2000) -> list[CodeChunk]:
    """Chunks of a source file named `path`; [] when `path` is not a language we parse."""
    language = language_of(path)
    if language is None or not text.strip():
        return []
    lines = text.splitlines()
    defs = sorted(_facts(path, language, text.encode("utf-8")).defs, key=lambda d: d.start)
    top = [d for d in defs if "." not in d.qualname or language in ("go", "rust") and d.kind == "method"]
    units: list[tuple[Definition, list[Definition]]] = []
    for d in top:
        members = [m for m in defs if m.qualname.startswith(d.qualname + ".") and m.qualname.count(".") == 1]
        units.append((d, members))
    chunks: list[CodeChunk] = []
    cursor = 1
    for d, members in units:
        if d.start < cursor:
            continue
        start = _with_leading(lines, d.start, cursor - 1)
        chunks += _pieces(path, "", lines, cursor, start - 1, size)
        span = "\n".join(lines[start - 1:d.end])
        if len(span) > 2 * size and members:
            head_end = _with_leading(lines, members[0].start, start) - 1
            chunks += _pieces(path, d.qualname, lines, start, head_end, size)
            inner = head_end + 1
            for m in members:
                m_start = _with_leading(lines, m.start, inner - 1)
                chunks += _pieces(path, d.qualname, lines, inner, m_start - 1, size)
                chunks += _pieces(path, m.qualname, lines, m_start, m.end, size)
                inner = m.end + 1
            chunks += _pieces(path, d.qualname, lines, inner, d.end, size)
        else:
            chunks += _pieces(path, d.qualname, lines, start, d.end, size)
        cursor = d.end + 1
    chunks += _pieces(path, "", lines, cursor, len(lines), size)
    return chunks
