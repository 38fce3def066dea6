"""Facts → edges: bind imported names, then resolve definitions' bases and calls to nodes.

A name resolves through, in order: the file's own (or, for Go, its package's) definitions,
`self`/`this`/`cls` to the enclosing class (and its resolved bases), an imported module or
symbol (following re-exports a few hops), glob imports, and for Rust an absolute crate path.
What does not resolve is kept: `calls_external` with the callee text, `imports` with the
module key and no target node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kenning.codegraph.facts import FileFacts, Import

SELF_NAMES = frozenset({"self", "this", "cls", "Self"})
REEXPORT_HOPS = 3
DEPENDENCY_KINDS = ("calls", "imports", "imports_symbol", "extends", "implements")
COVERING_KINDS = frozenset({"calls", "imports", "imports_symbol"})


@dataclass(frozen=True)
class Edge:
    src: int
    dst: int | None
    kind: str
    external: str | None = None
    line: int | None = None


@dataclass
class FileEntry:
    id: int
    path: str
    language: str
    module: str
    is_test: bool


@dataclass
class ProjectIndex:
    """What resolution needs to know about every file of a project (loaded from the store)."""

    files: dict[int, FileEntry] = field(default_factory=dict)
    modules: dict[str, list[int]] = field(default_factory=dict)
    symbols: dict[int, dict[str, int]] = field(default_factory=dict)   # file → qualname → node ('' = file)
    file_nodes: set[int] = field(default_factory=set)
    load_facts: Callable[[int], FileFacts | None] = lambda file_id: None

    def add_file(self, entry: FileEntry, symbols: dict[str, int]) -> None:
        old = self.files.get(entry.id)
        if old is not None and old.module != entry.module:
            self.modules[old.module] = [f for f in self.modules.get(old.module, []) if f != entry.id]
        self.files[entry.id] = entry
        if entry.id not in self.modules.setdefault(entry.module, []):
            self.modules[entry.module].append(entry.id)
        self.symbols[entry.id] = symbols
        self.file_nodes.add(symbols[""])

    def module_files(self, key: str) -> list[int]:
        return self.modules.get(key) or self.modules.get(key + "/index") or []

    def is_module(self, key: str) -> bool:
        return bool(self.module_files(key))


@dataclass(frozen=True)
class Binding:
    module: str
    name: str | None = None   # None: the module itself


class FileResolver:
    def __init__(self, index: ProjectIndex, file_id: int, facts: FileFacts) -> None:
        self.index = index
        self.file = index.files[file_id]
        self.facts = facts
        self.local = index.module_files(self.file.module) or [file_id]
        self.bindings, self.globs = bindings_of(facts, index)
        self.file_node = index.symbols[file_id][""]

    # -- lookups ---------------------------------------------------------------------------------
    def local_node(self, qualname: str) -> int | None:
        for file_id in self.local:
            node = self.index.symbols.get(file_id, {}).get(qualname)
            if node is not None:
                return node
        return None

    def in_module(self, key: str, rest: list[str], hops: int = 0) -> int | None:
        """Node `rest` inside module `key`, descending into submodules and following re-exports."""
        while rest and self.index.is_module(f"{key}.{rest[0]}"):
            key, rest = f"{key}.{rest[0]}", rest[1:]
        files = self.index.module_files(key)
        if not rest:
            return self.index.symbols[files[0]][""] if files else None
        for file_id in files:
            symbols = self.index.symbols.get(file_id, {})
            name = rest
            if rest[0] == "default":
                facts = self.index.load_facts(file_id)
                if facts is None or not facts.default_export:
                    continue
                name = [facts.default_export, *rest[1:]]
            node = symbols.get(".".join(name))
            if node is not None:
                return node
        if hops >= REEXPORT_HOPS:
            return None
        for file_id in files:
            facts = self.index.load_facts(file_id)
            if facts is None:
                continue
            binds, globs = bindings_of(facts, self.index)
            target = binds.get(rest[0])
            if target is not None:
                found = self.in_module(target.module, ([target.name] if target.name else []) + rest[1:], hops + 1)
                if found is not None:
                    return found
            for glob in globs:
                found = self.in_module(glob, rest, hops + 1)
                if found is not None:
                    return found
        return None

    def name(self, dotted: str, scope: str = "") -> int | None:
        parts = dotted.split(".")
        if parts[0] in SELF_NAMES and len(parts) > 1:
            return self.member(scope, parts[1:])
        node = self.local_node(dotted)
        if node is not None:
            return node
        if self.local_node(parts[0]) is not None:
            return None  # an attribute of a local value: not statically known
        binding = self.bindings.get(parts[0])
        if binding is not None:
            return self.in_module(binding.module, ([binding.name] if binding.name else []) + parts[1:])
        for glob in self.globs:
            node = self.in_module(glob, parts)
            if node is not None:
                return node
        if self.file.language == "rust" and len(parts) > 1:  # absolute, or a child module's path
            for base in ("", self.file.module + "."):
                for cut in range(len(parts) - 1, 0, -1):
                    if self.index.is_module(base + ".".join(parts[:cut])):
                        return self.in_module(base + ".".join(parts[:cut]), parts[cut:])
        return None

    def member(self, scope: str, rest: list[str]) -> int | None:
        """`self.x` inside a method of class C: C.x, else a resolved base class's x."""
        owner = self.owner_class(scope)
        if not owner:
            return None
        node = self.local_node(f"{owner}.{'.'.join(rest)}")
        if node is not None:
            return node
        for base in self.bases_of(owner):
            found = self.name(f"{base}.{'.'.join(rest)}")
            if found is not None:
                return found
        return None

    def owner_class(self, scope: str) -> str:
        defs = {d.qualname: d for d in self.facts.defs}
        parts = scope.split(".")
        for cut in range(len(parts), 0, -1):
            candidate = ".".join(parts[:cut])
            definition = defs.get(candidate)
            if definition is not None and definition.kind in ("class", "interface") and candidate != scope:
                return candidate
            if definition is None and self.file.language in ("go", "rust") and cut < len(parts):
                return candidate  # Go/Rust methods hang off types defined elsewhere in the package
        return ""

    def bases_of(self, owner: str) -> list[str]:
        for definition in self.facts.defs:
            if definition.qualname == owner:
                return definition.extends
        return []

    # -- edges --------------------------------------------------------------------------------------
    def edges(self) -> list[Edge]:
        out: dict[tuple, Edge] = {}

        def add(edge: Edge) -> None:
            out.setdefault((edge.src, edge.dst, edge.kind, edge.external), edge)

        own = self.index.symbols[self.file.id]
        for imp in self.facts.imports:
            self._import_edges(imp, add)
        for definition in self.facts.defs:
            src = own.get(definition.qualname)
            if src is None:
                continue
            for kind, names in (("extends", definition.extends), ("implements", definition.implements)):
                for base in names:
                    dst = self.name(base)
                    add(Edge(src, dst, kind, None if dst else base, definition.start))
        for kind, owner, target in self.facts.relations:
            src = own.get(owner) or self.local_node(owner)
            if src is not None:
                dst = self.name(target)
                add(Edge(src, dst, kind, None if dst else target))
        for call in self.facts.calls:
            src = own.get(call.scope, self.file_node)
            dst = self.name(call.callee, call.scope)
            if dst in self.index.file_nodes:
                dst = None  # calling a module is not a call to a definition
            if dst is None:
                add(Edge(src, None, "calls_external", call.callee, call.line))
            elif dst != src:
                add(Edge(src, dst, "calls", None, call.line))
        edges = list(out.values())
        if self.file.is_test:
            edges += self._tested_by(edges)
        return edges

    def _import_edges(self, imp: Import, add: Callable[[Edge], None]) -> None:
        files = self.index.module_files(imp.module)
        for file_id in files:
            if file_id != self.file.id:
                add(Edge(self.file_node, self.index.symbols[file_id][""], "imports", None, imp.line))
        if not files:
            add(Edge(self.file_node, None, "imports", imp.module, imp.line))
        for name, _bound in imp.names:
            if name == "*":
                continue
            submodule = f"{imp.module}.{name}"
            if self.index.is_module(submodule):
                for file_id in self.index.module_files(submodule):
                    if file_id != self.file.id:
                        add(Edge(self.file_node, self.index.symbols[file_id][""], "imports", None, imp.line))
            elif files:
                dst = self.in_module(imp.module, [name])
                if dst is not None:
                    add(Edge(self.file_node, dst, "imports_symbol", None, imp.line))

    def _tested_by(self, edges: list[Edge]) -> list[Edge]:
        covered: dict[tuple[int, int], int | None] = {}
        for edge in edges:
            if edge.kind in COVERING_KINDS and edge.dst is not None:
                covered.setdefault((edge.dst, edge.src), edge.line)
        return [Edge(dst, src, "tested_by", None, line) for (dst, src), line in covered.items()]


def bindings_of(facts: FileFacts, index: ProjectIndex) -> tuple[dict[str, Binding], list[str]]:
    """Imported names → what they bind; and the modules imported with `*`."""
    binds: dict[str, Binding] = {}
    globs: list[str] = []
    for imp in facts.imports:
        if not imp.names:
            if imp.alias:
                binds[imp.alias] = Binding(imp.module)
            elif imp.alias is None:  # Python `import a.b` binds `a`
                head = imp.module.split(".")[0]
                binds[head] = Binding(head)
            continue
        for name, bound in imp.names:
            if name == "*":
                if bound == "*":
                    globs.append(imp.module)
                else:
                    binds[bound] = Binding(imp.module)
            elif index.is_module(f"{imp.module}.{name}"):
                binds[bound] = Binding(f"{imp.module}.{name}")
            else:
                binds[bound] = Binding(imp.module, name)
    return binds, globs
