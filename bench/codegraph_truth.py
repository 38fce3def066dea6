"""Ground truth for bench/codegraph.py: Python's own `ast` module resolving imports and direct
calls — a second method, written independently of kenning.codegraph's tree-sitter resolver.

Conventions shared with the graph (so the sets are comparable): module names (package chain,
or the path for files outside regular packages, a leading `src.` dropped); nodes are
top-level functions/classes and class members, functions nested in functions count as their
enclosing node; `self.x`/`cls.x` resolve to the enclosing class or its bases; a call to a
class is a call to that class; a call to a module is not a call.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import PurePosixPath

HOPS = 3


@dataclass
class Module:
    path: str
    name: str
    package: str
    defs: dict[str, ast.AST] = field(default_factory=dict)          # qualname → node
    bases: dict[str, list[str]] = field(default_factory=dict)       # class qualname → dotted bases
    binds: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # name → (module, symbol)
    imports: list[tuple[str, list[str]]] = field(default_factory=list)      # (module, from-names)
    globs: list[str] = field(default_factory=list)                           # `from m import *`
    calls: list[tuple[str, str]] = field(default_factory=list)               # (scope, dotted callee)


def module_name(path: str, packages: set[str]) -> tuple[str, str]:
    p = PurePosixPath(path)
    if str(p.parent) not in packages:
        parts = [x for x in [*p.parent.parts, p.stem] if x != "."]
        if parts[0] == "src" and len(parts) > 1:
            parts = parts[1:]
        name = ".".join(parts)
        return name, name.rpartition(".")[0]
    parts = [] if p.name == "__init__.py" else [p.stem]
    parent = p.parent
    while str(parent) in packages and str(parent) != ".":
        parts.insert(0, parent.name)
        parent = parent.parent
    name = ".".join(parts)
    return name, name if p.name == "__init__.py" else name.rpartition(".")[0]


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else None
    return None


class _Walker(ast.NodeVisitor):
    def __init__(self, mod: Module) -> None:
        self.mod = mod
        self.scope: list[str] = []      # qualname parts of graph nodes
        self.in_function = 0

    def _def(self, node, is_class: bool) -> None:
        for expr in [*node.decorator_list, *(getattr(node, "bases", []) or []),
                     *[k.value for k in getattr(node, "keywords", [])]]:
            self.visit(expr)
        if self.in_function:
            self.in_function += 1
            self._body(node, is_class)
            self.in_function -= 1
            return
        qualname = ".".join([*self.scope, node.name])
        self.mod.defs[qualname] = node
        if is_class:
            self.mod.bases[qualname] = [d for d in (_dotted(b) for b in node.bases) if d and d != "object"]
        self.scope.append(node.name)
        if not is_class:
            self.in_function += 1
        self._body(node, is_class)
        if not is_class:
            self.in_function -= 1
        self.scope.pop()

    def _body(self, node, is_class: bool) -> None:
        if not is_class:
            self.visit(node.args)
            if node.returns is not None:
                self.visit(node.returns)
        for stmt in node.body:
            self.visit(stmt)

    def visit_FunctionDef(self, node):  # noqa: N802
        self._def(node, False)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):  # noqa: N802
        self._def(node, True)

    def visit_Import(self, node):  # noqa: N802
        for alias in node.names:
            if alias.asname:
                self.mod.binds[alias.asname] = (alias.name, None)
            else:
                head = alias.name.split(".")[0]
                self.mod.binds[head] = (head, None)
            self.mod.imports.append((alias.name, []))

    def visit_ImportFrom(self, node):  # noqa: N802
        base = self.mod.package.split(".") if self.mod.package else []
        if node.level:
            base = base[: len(base) - (node.level - 1)] if node.level - 1 <= len(base) else []
            module = ".".join([*base, node.module] if node.module else base)
        else:
            module = node.module or ""
        names = []
        for alias in node.names:
            if alias.name == "*":
                self.mod.globs.append(module)
                continue
            self.mod.binds[alias.asname or alias.name] = (module, alias.name)
            names.append(alias.name)
        self.mod.imports.append((module, names))

    def visit_Call(self, node):  # noqa: N802
        callee = _dotted(node.func)
        if callee:
            self.mod.calls.append((".".join(self.scope), callee))
        self.generic_visit(node)


class Truth:
    def __init__(self, sources: dict[str, str], packages: set[str]) -> None:
        self.modules: dict[str, list[Module]] = {}
        self.files: list[Module] = []
        for path, text in sources.items():
            name, package = module_name(path, packages)
            mod = Module(path, name, package)
            try:
                _Walker(mod).visit(ast.parse(text))
            except (SyntaxError, ValueError, RecursionError):
                continue
            self.files.append(mod)
            self.modules.setdefault(name, []).append(mod)

    def symbol(self, module: str, parts: list[str], hops: int = 0) -> tuple[str, str] | None:
        """(path, qualname) of `parts` inside `module` (submodules, then definitions, then re-exports)."""
        while parts and f"{module}.{parts[0]}" in self.modules:
            module, parts = f"{module}.{parts[0]}", parts[1:]
        if not parts or module not in self.modules:
            return None
        for mod in self.modules[module]:
            qualname = ".".join(parts)
            if qualname in mod.defs:
                return mod.path, qualname
        if hops < HOPS:
            for mod in self.modules[module]:
                bound = mod.binds.get(parts[0])
                if bound:
                    found = self.symbol(bound[0], ([bound[1]] if bound[1] else []) + parts[1:], hops + 1)
                    if found:
                        return found
                for glob in mod.globs:
                    found = self.symbol(glob, parts, hops + 1)
                    if found:
                        return found
        return None

    def resolve(self, mod: Module, scope: str, callee: str) -> tuple[str, str] | None:
        parts = callee.split(".")
        if parts[0] in ("self", "cls") and len(parts) > 1:
            return self._member(mod, scope, parts[1:])
        if callee in mod.defs:
            return mod.path, callee
        if parts[0] in mod.defs:
            return None
        bound = mod.binds.get(parts[0])
        if bound:
            return self.symbol(bound[0], ([bound[1]] if bound[1] else []) + parts[1:])
        for glob in mod.globs:
            found = self.symbol(glob, parts)
            if found:
                return found
        return None

    def _member(self, mod: Module, scope: str, rest: list[str]) -> tuple[str, str] | None:
        owner = ""
        pieces = scope.split(".")
        for cut in range(len(pieces) - 1, 0, -1):
            if ".".join(pieces[:cut]) in mod.bases:
                owner = ".".join(pieces[:cut])
                break
        if not owner:
            return None
        name = f"{owner}.{'.'.join(rest)}"
        if name in mod.defs:
            return mod.path, name
        for base in mod.bases.get(owner, []):
            found = self.resolve(mod, "", f"{base}.{'.'.join(rest)}")
            if found:
                return found
        return None

    def edges(self) -> dict[str, set[tuple[str, str]]]:
        calls, imports = set(), set()
        for mod in self.files:
            for module, names in mod.imports:
                targets = [m.path for m in self.modules.get(module, [])]
                targets += [m.path for n in names for m in self.modules.get(f"{module}.{n}", [])]
                imports |= {(f"{mod.path}:", f"{t}:") for t in targets if t != mod.path}
            for scope, callee in mod.calls:
                found = self.resolve(mod, scope, callee)
                src = f"{mod.path}:{scope}"
                if found and f"{found[0]}:{found[1]}" != src:
                    calls.add((src, f"{found[0]}:{found[1]}"))
        return {"calls": calls, "imports": imports}
