"""Python facts: classes, functions and methods (not functions nested in functions), imports
with relative imports made absolute, and calls by their dotted callee text."""

from __future__ import annotations

import tree_sitter as ts

from kenning.codegraph.facts import Definition, FileFacts, Import
from kenning.codegraph.languages import parser, query
from kenning.codegraph.scopes import DOTTED, dotted_calls, first_error_line, text

QUERY = """
(function_definition name: (identifier) @name) @function
(class_definition name: (identifier) @name) @class
(call function: [(identifier) (attribute)] @callee)
(import_statement) @import
(import_from_statement) @import_from
"""
DEF_TYPES = {"function_definition": "function", "class_definition": "class"}


def package_of(module: str, is_package: bool) -> str:
    """The package relative imports start from: the module itself for an __init__.py."""
    return module if is_package else module.rpartition(".")[0]


def absolute(spec: str, package: str) -> str:
    """`..x.y` seen from package `a.b.c` is `a.b.x.y`."""
    dots = len(spec) - len(spec.lstrip("."))
    if not dots:
        return spec
    parts = package.split(".") if package else []
    base = parts[: len(parts) - (dots - 1)] if dots - 1 <= len(parts) else []
    rest = spec[dots:]
    return ".".join([*base, rest] if rest else base)


def _definition(node: ts.Node) -> tuple[str, str] | None:
    """(kind, qualname) when `node` is a graph node: not inside a function body."""
    names = [text(node.child_by_field_name("name"))]
    kind = DEF_TYPES[node.type]
    parent = node.parent
    enclosing_class = False
    while parent is not None:
        if parent.type == "function_definition":
            return None
        if parent.type == "class_definition":
            names.append(text(parent.child_by_field_name("name")))
            enclosing_class = enclosing_class or len(names) == 2
        parent = parent.parent
    if kind == "function" and enclosing_class:
        kind = "method"
    return kind, ".".join(reversed(names))


def _bases(node: ts.Node) -> list[str]:
    args = node.child_by_field_name("superclasses")
    if args is None:
        return []
    return [text(a) for a in args.named_children if DOTTED.match(text(a)) and text(a) != "object"]


def _imports(node: ts.Node, package: str) -> list[Import]:
    line = node.start_point[0] + 1
    if node.type == "import_statement":
        out = []
        for child in node.named_children:
            if child.type == "aliased_import":
                out.append(Import(text(child.child_by_field_name("name")),
                                  alias=text(child.child_by_field_name("alias")), line=line))
            elif child.type == "dotted_name":
                out.append(Import(text(child), line=line))  # binds its first segment
        return out
    module_node = node.child_by_field_name("module_name")
    module = absolute(text(module_node), package)
    names = []
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            names.append([text(child.child_by_field_name("name")), text(child.child_by_field_name("alias"))])
        else:
            names.append([text(child), text(child).split(".")[-1]])
    if any(c.type == "wildcard_import" for c in node.named_children):
        names.append(["*", "*"])
    return [Import(module, names=names, line=line)]


def extract(source: bytes, module: str, is_package: bool) -> FileFacts:
    root = parser("python").parse(source).root_node
    facts = FileFacts("python", error_line=first_error_line(root))
    package = package_of(module, is_package)
    spans, callees = [], []
    for _, match in ts.QueryCursor(query("python", QUERY)).matches(root):
        if "callee" in match:
            callees.append(match["callee"][0])
        elif "import" in match:
            facts.imports.extend(_imports(match["import"][0], package))
        elif "import_from" in match:
            facts.imports.extend(_imports(match["import_from"][0], package))
        else:
            node = (match.get("function") or match["class"])[0]
            found = _definition(node)
            if found is None:
                continue
            kind, qualname = found
            facts.defs.append(Definition(kind, qualname.rsplit(".", 1)[-1], qualname,
                                         node.start_point[0] + 1, node.end_point[0] + 1,
                                         extends=_bases(node) if kind == "class" else []))
            spans.append((node.start_byte, node.end_byte, qualname))
    facts.calls = dotted_calls(callees, spans)
    return facts
