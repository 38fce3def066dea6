"""Rust facts: functions, `impl` methods (`Type.method`), structs / enums (classes), traits
(interfaces), type aliases; `use` trees made absolute (`crate`, `self`, `super`), calls by
path (`a::f`, `Type::new`, `self.m`), and `impl Trait for Type` as `implements`."""

from __future__ import annotations

import tree_sitter as ts

from kenning.codegraph.facts import Call, Definition, FileFacts, Import
from kenning.codegraph.languages import parser, query
from kenning.codegraph.scopes import DOTTED, ScopeIndex, first_error_line, text

QUERY = """
(use_declaration argument: (_) @use)
(function_item name: (identifier) @name) @function
(struct_item name: (type_identifier) @name) @class
(enum_item name: (type_identifier) @name) @class
(trait_item name: (type_identifier) @name) @interface
(type_item name: (type_identifier) @name) @type
(impl_item) @impl
(call_expression function: [(identifier) (scoped_identifier) (field_expression)] @callee)
"""
KINDS = ("function", "class", "interface", "type")
_BODIES = {"function_item", "closure_expression"}


def module_key(path: str, crate: str, crate_dir: str) -> str:
    """`src/lib.rs` → `crate`, `src/a/b.rs` and `src/a/b/mod.rs` → `crate.a.b`, `tests/t.rs` → `crate.tests.t`."""
    rel = path[len(crate_dir) + 1:] if crate_dir else path
    parts = rel[:-3].split("/")
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] in ("lib", "main", "mod"):
        parts = parts[:-1]
    return ".".join([crate, *parts])


def _absolute(parts: list[str], module: str, crate: str) -> list[str]:
    """Make a `use`/call path absolute: crate::, self::, super:: (repeatable)."""
    if not parts:
        return parts
    if parts[0] == "crate":
        return [crate, *parts[1:]]
    if parts[0] in ("self", "super"):
        base = module.split(".")
        while parts and parts[0] in ("self", "super"):
            if parts[0] == "super":
                base = base[:-1]
            parts = parts[1:]
        return [*base, *parts]
    return parts


def _uses(node: ts.Node, prefix: list[str], out: list[tuple[list[str], str]]) -> None:
    """Flatten a use tree into (path parts, bound name); '*' for globs."""
    kind = node.type
    if kind in ("identifier", "crate", "self", "super", "scoped_identifier"):
        parts = prefix + text(node).split("::")
        if parts[-1] == "self":
            parts = parts[:-1]
        out.append((parts, parts[-1] if parts else ""))
    elif kind == "use_as_clause":
        parts = prefix + text(node.child_by_field_name("path")).split("::")
        out.append((parts, text(node.child_by_field_name("alias"))))
    elif kind == "scoped_use_list":
        path = node.child_by_field_name("path")
        base = prefix + (text(path).split("::") if path is not None else [])
        listed = node.child_by_field_name("list")
        if listed is not None:
            _uses(listed, base, out)
    elif kind == "use_list":
        for child in node.named_children:
            _uses(child, prefix, out)
    elif kind == "use_wildcard":
        inner = node.named_children[0] if node.named_children else None
        out.append((prefix + (text(inner).split("::") if inner is not None else []), "*"))


def _qualname(node: ts.Node, name: str) -> tuple[str, bool] | None:
    """(qualname, is_method); None inside a function body."""
    parent = node.parent
    owner = []
    while parent is not None:
        if parent.type in _BODIES:
            return None
        if parent.type == "impl_item":
            owner.append(_type_name(parent.child_by_field_name("type")))
        elif parent.type == "trait_item":
            owner.append(text(parent.child_by_field_name("name")))
        elif parent.type == "mod_item":
            owner.append(text(parent.child_by_field_name("name")))
        parent = parent.parent
    return ".".join([*reversed(owner), name]), bool(owner)


def _type_name(node: ts.Node | None) -> str:
    while node is not None and node.type in ("generic_type", "reference_type", "scoped_type_identifier"):
        inner = node.child_by_field_name("type") or node.child_by_field_name("name")
        if inner is None:
            break
        node = inner
    return text(node)


def extract(source: bytes, module: str, crate: str) -> FileFacts:
    root = parser("rust").parse(source).root_node
    facts = FileFacts("rust", error_line=first_error_line(root))
    spans, callees = [], []
    for _, match in ts.QueryCursor(query("rust", QUERY)).matches(root):
        if "callee" in match:
            callees.append(match["callee"][0])
        elif "use" in match:
            node = match["use"][0]
            flat: list[tuple[list[str], str]] = []
            _uses(node, [], flat)
            for parts, bound in flat:
                parts = _absolute(parts, module, crate)
                if len(parts) < 2 and bound != "*":
                    continue
                line = node.start_point[0] + 1
                if bound == "*":
                    facts.imports.append(Import(".".join(parts), names=[["*", "*"]], line=line))
                else:
                    facts.imports.append(Import(".".join(parts[:-1]), names=[[parts[-1], bound]], line=line))
        elif "impl" in match:
            node = match["impl"][0]
            trait = node.child_by_field_name("trait")
            if trait is not None:
                facts.relations.append(["implements", _type_name(node.child_by_field_name("type")),
                                        text(trait).replace("::", ".")])
        else:
            kind = next(k for k in KINDS if k in match)
            node = match[kind][0]
            found = _qualname(node, text(match["name"][0]))
            if found is None:
                continue
            qualname, owned = found
            if kind == "function" and owned:
                kind = "method"
            facts.defs.append(Definition(kind, qualname.rsplit(".", 1)[-1], qualname,
                                         node.start_point[0] + 1, node.end_point[0] + 1))
            if kind in ("function", "method"):
                spans.append((node.start_byte, node.end_byte, qualname))
    scopes = ScopeIndex(spans)
    for node in callees:
        raw = text(node)
        parts = _absolute(raw.split("::"), module, crate) if "::" in raw else [raw]
        callee = ".".join(parts)
        if DOTTED.match(callee):
            facts.calls.append(Call(scopes.at(node.start_byte), callee, node.start_point[0] + 1))
    return facts
