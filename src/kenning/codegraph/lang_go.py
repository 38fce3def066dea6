"""Go facts: functions, methods (`Type.Method`), struct / interface / other types (embedded
fields as `extends`), imports by package directory, calls; a method's receiver reads as `self`."""

from __future__ import annotations

import posixpath

import tree_sitter as ts

from kenning.codegraph.facts import Call, Definition, FileFacts, Import
from kenning.codegraph.languages import parser, query
from kenning.codegraph.scopes import DOTTED, ScopeIndex, first_error_line, text

QUERY = """
(import_spec) @import
(function_declaration name: (identifier) @name) @function
(method_declaration name: (field_identifier) @name) @method
(type_spec name: (type_identifier) @name) @type
(call_expression function: [(identifier) (selector_expression)] @callee)
"""


def module_key(path: str) -> str:
    """A Go package is its directory."""
    return posixpath.dirname(path) or "."


def import_key(spec: str, go_module: str | None) -> str:
    if go_module and (spec == go_module or spec.startswith(go_module + "/")):
        return spec[len(go_module) + 1:] or "."
    return spec


def _receiver(node: ts.Node) -> tuple[str, str]:
    """(type name, receiver variable) of a method declaration."""
    params = node.child_by_field_name("receiver")
    decl = params.named_children[0] if params is not None and params.named_children else None
    if decl is None:
        return "", ""
    type_node = decl.child_by_field_name("type")
    while type_node is not None and type_node.type in ("pointer_type", "generic_type"):
        type_node = type_node.named_children[0] if type_node.named_children else None
    return text(type_node), text(decl.child_by_field_name("name"))


def _type_def(node: ts.Node) -> tuple[str, list[str]]:
    body = node.child_by_field_name("type")
    if body is None:
        return "type", []
    if body.type == "interface_type":
        embedded = [text(c) for c in body.named_children if c.type in ("type_elem", "constraint_elem")]
        return "interface", [e for e in embedded if DOTTED.match(e)]
    if body.type == "struct_type":
        fields = body.named_children[0] if body.named_children else None
        embedded = []
        for field in fields.named_children if fields is not None else []:
            if field.type == "field_declaration" and field.child_by_field_name("name") is None:
                type_node = field.child_by_field_name("type")
                if type_node is not None and type_node.type == "pointer_type" and type_node.named_children:
                    type_node = type_node.named_children[0]
                if DOTTED.match(text(type_node)):
                    embedded.append(text(type_node))
        return "class", embedded
    return "type", []


def extract(source: bytes, path: str, go_module: str | None) -> FileFacts:
    root = parser("go").parse(source).root_node
    facts = FileFacts("go", error_line=first_error_line(root))
    spans, callees, receivers = [], [], {}
    for _, match in ts.QueryCursor(query("go", QUERY)).matches(root):
        if "callee" in match:
            callees.append(match["callee"][0])
        elif "import" in match:
            spec = match["import"][0]
            target = import_key(text(spec.child_by_field_name("path")).strip('"`'), go_module)
            name = text(spec.child_by_field_name("name"))
            alias = name if name and name not in (".", "_") else target.rsplit("/", 1)[-1]
            facts.imports.append(Import(target, alias=alias, line=spec.start_point[0] + 1))
        else:
            kind: str = next(k for k in ("function", "method", "type") if k in match)
            node, name = match[kind][0], text(match["name"][0])
            qualname = name
            extends: list[str] = []
            if kind == "method":
                owner, var = _receiver(node)
                qualname = f"{owner}.{name}" if owner else name
                receivers[qualname] = var
            elif kind == "type":
                kind, extends = _type_def(node)
            facts.defs.append(Definition(kind, name, qualname, node.start_point[0] + 1,
                                         node.end_point[0] + 1, extends=extends))
            if kind in ("function", "method"):
                spans.append((node.start_byte, node.end_byte, qualname))
    scopes = ScopeIndex(spans)
    for node in callees:
        callee = text(node)
        if not DOTTED.match(callee):
            continue
        scope = scopes.at(node.start_byte)
        head, _, rest = callee.partition(".")
        if rest and receivers.get(scope) == head:
            callee = f"self.{rest}"
        facts.calls.append(Call(scope, callee, node.start_point[0] + 1))
    return facts
