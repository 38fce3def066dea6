"""What one source file says, independent of every other file: definitions, imports, calls.

Facts are plain data (JSON round-trip) so edges can be re-resolved when *another* file
changes without parsing this one again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict


@dataclass
class Definition:
    kind: str          # class | function | method | interface | type
    name: str
    qualname: str      # dotted inside the file: "Class.method"
    start: int         # 1-based lines, inclusive
    end: int
    extends: list[str] = field(default_factory=list)     # raw dotted names
    implements: list[str] = field(default_factory=list)


@dataclass
class Import:
    module: str                     # normalised module key the import points at (see resolve)
    names: list[list[str]] = field(default_factory=list)  # [[name, bound_as], ...]; [] = whole module
    alias: str | None = None        # the name a whole-module import binds (None: Python's
                                    # `import a.b`, which binds its first segment `a`)
    line: int = 0


@dataclass
class Call:
    scope: str    # qualname of the enclosing definition node, "" at module level
    callee: str   # dotted text: "f", "mod.f", "self.m", "Type.new"
    line: int


class DefinitionJson(TypedDict, total=False):
    kind: str
    name: str
    qualname: str
    start: int
    end: int
    extends: list[str]
    implements: list[str]


class ImportJson(TypedDict, total=False):
    module: str
    names: list[list[str]]
    alias: str | None
    line: int


class CallJson(TypedDict):
    scope: str
    callee: str
    line: int


class FileFactsJson(TypedDict, total=False):
    """FileFacts as stored (code_files.facts, JSON): `language` always, the rest when a build wrote it."""

    language: str
    defs: list[DefinitionJson]
    imports: list[ImportJson]
    calls: list[CallJson]
    error_line: int | None
    default_export: str | None
    relations: list[list[str]]


@dataclass
class FileFacts:
    language: str
    defs: list[Definition] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    error_line: int | None = None       # first syntax error (the rest of the file is still used)
    default_export: str | None = None   # JS/TS `export default name`
    relations: list[list[str]] = field(default_factory=list)  # [kind, from qualname, to name]: Rust impls

    def to_json(self) -> dict[str, object]:
        """Plain dicts for json.dumps (vars() instead of dataclasses.asdict: ~10x cheaper)."""
        return {"language": self.language, "defs": [vars(d) for d in self.defs],
                "imports": [vars(i) for i in self.imports], "calls": [vars(c) for c in self.calls],
                "error_line": self.error_line, "default_export": self.default_export,
                "relations": self.relations}

    @classmethod
    def from_json(cls, data: FileFactsJson) -> "FileFacts":
        return cls(
            language=data["language"],
            defs=[Definition(**d) for d in data.get("defs", [])],
            imports=[Import(**i) for i in data.get("imports", [])],
            calls=[Call(**c) for c in data.get("calls", [])],
            error_line=data.get("error_line"),
            default_export=data.get("default_export"),
            relations=data.get("relations", []),
        )
