"""JavaScript / TypeScript / TSX facts: classes, functions (also `const f = () => …`),
methods, interfaces, type aliases and enums; ES imports, re-exports and `require`; calls and
`new` expressions by their dotted callee text; `extends` / `implements`."""

from __future__ import annotations

import posixpath

import tree_sitter as ts

from kenning.codegraph.facts import Definition, FileFacts, Import
from kenning.codegraph.languages import parser, query
from kenning.codegraph.scopes import DOTTED, dotted_calls, first_error_line, text

BASE_QUERY = """
(import_statement) @import
(export_statement source: (_)) @reexport
(export_statement "default" (identifier) @default_name)
(call_expression function: (_) @callee) @call
(new_expression constructor: [(identifier) (member_expression)] @callee) @new
(function_declaration name: (identifier) @name) @function
(generator_function_declaration name: (identifier) @name) @function
(class_declaration name: (_) @name) @class
(method_definition name: (_) @name) @method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @function
"""
TS_QUERY = BASE_QUERY + """
(abstract_class_declaration name: (_) @name) @class
(interface_declaration name: (_) @name) @interface
(type_alias_declaration name: (_) @name) @type
(enum_declaration name: (_) @name) @type
"""
KINDS = ("function", "class", "method", "interface", "type")
SOURCE_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_FUNCTION_BODIES = {"function_declaration", "generator_function_declaration", "arrow_function",
                    "function_expression", "method_definition", "statement_block"}
_CLASSES = {"class_declaration", "abstract_class_declaration", "class"}


def module_key(path: str) -> str:
    """A file's import key: its path without the extension."""
    for suffix in SOURCE_SUFFIXES:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


def import_key(spec: str, from_path: str) -> str:
    """`./x.js` imported from `src/a.ts` is `src/x`; bare specifiers stay as they are."""
    if not spec.startswith("."):
        return spec
    return module_key(posixpath.normpath(posixpath.join(posixpath.dirname(from_path), spec)))


def _string(node: ts.Node | None) -> str:
    return text(node).strip("'\"`") if node is not None else ""


def _definition(node: ts.Node, kind: str) -> tuple[str, str] | None:
    """(kind, qualname) for definitions outside function bodies."""
    name_node = node.child_by_field_name("name")
    names = [text(name_node)]
    parent = node.parent
    in_class = False
    while parent is not None:
        if parent.type in _CLASSES:
            names.append(text(parent.child_by_field_name("name")) or "<anonymous>")
            in_class = True
        elif parent.type in _FUNCTION_BODIES and parent.type != "statement_block":
            return None
        elif parent.type == "statement_block" and not in_class:
            return None
        parent = parent.parent
    if kind == "function" and node.type == "variable_declarator":
        if node.parent is None or node.parent.type not in ("lexical_declaration", "variable_declaration"):
            return None
    return kind, ".".join(reversed(names))


def _heritage(node: ts.Node) -> tuple[list[str], list[str]]:
    extends, implements = [], []
    for child in node.named_children:
        if child.type == "class_heritage":
            for clause in child.named_children:
                names = [text(c) for c in clause.named_children if DOTTED.match(text(c))]
                if clause.type == "implements_clause":
                    implements += names
                elif clause.type == "extends_clause":
                    extends += names[:1]
                elif DOTTED.match(text(clause)):  # JavaScript: class_heritage holds the expression
                    extends.append(text(clause))
        elif child.type == "extends_type_clause":
            extends += [text(c) for c in child.named_children if DOTTED.match(text(c))]
    return extends, implements


def _import(node: ts.Node, path: str) -> Import | None:
    module = import_key(_string(node.child_by_field_name("source")), path)
    line = node.start_point[0] + 1
    if node.type == "export_statement":  # export {a as b} from / export * from
        names = []
        for exported in node.named_children:
            if exported.type == "export_clause":
                for spec in exported.named_children:
                    name = text(spec.child_by_field_name("name"))
                    names.append([name, text(spec.child_by_field_name("alias")) or name])
        return Import(module, names=names or [["*", "*"]], line=line)
    clause = next((c for c in node.named_children if c.type == "import_clause"), None)
    if clause is None:
        return Import(module, line=line)  # side-effect import
    names, alias = [], None
    for part in clause.named_children:
        if part.type == "identifier":
            names.append(["default", text(part)])
        elif part.type == "namespace_import":
            alias = text(part.named_children[-1]) if part.named_children else None
        elif part.type == "named_imports":
            for spec in part.named_children:
                name = text(spec.child_by_field_name("name"))
                names.append([name, text(spec.child_by_field_name("alias")) or name])
    if alias and not names:
        return Import(module, alias=alias, line=line)
    if alias:
        names.append(["*", alias])
    return Import(module, names=names, line=line)


def _require(call: ts.Node, path: str) -> Import | None:
    args = call.child_by_field_name("arguments")
    if args is None or not args.named_children or args.named_children[0].type != "string":
        return None
    declarator = call.parent
    alias = None
    if declarator is not None and declarator.type == "variable_declarator":
        name = declarator.child_by_field_name("name")
        alias = text(name) if name is not None and name.type == "identifier" else None
    return Import(import_key(_string(args.named_children[0]), path), alias=alias or "",
                  line=call.start_point[0] + 1)


def extract(source: bytes, language: str, path: str) -> FileFacts:
    root = parser(language).parse(source).root_node
    facts = FileFacts(language, error_line=first_error_line(root))
    q = query(language, BASE_QUERY if language == "javascript" else TS_QUERY)
    spans, callees = [], []
    for _, match in ts.QueryCursor(q).matches(root):
        if "callee" in match:
            callee = match["callee"][0]
            if text(callee) == "require" and "call" in match:
                found = _require(match["call"][0], path)
                if found is not None:
                    facts.imports.append(found)
                    continue
            callees.append(callee)
        elif "import" in match or "reexport" in match:
            found = _import((match.get("import") or match["reexport"])[0], path)
            if found is not None:
                facts.imports.append(found)
        elif "default_name" in match:
            facts.default_export = text(match["default_name"][0])
        else:
            kind = next(k for k in KINDS if k in match)
            node = match[kind][0]
            defined = _definition(node, kind)
            if defined is None:
                continue
            kind, qualname = defined
            if kind == "function" and "." in qualname:
                kind = "method"
            extends, implements = _heritage(node) if kind in ("class", "interface") else ([], [])
            facts.defs.append(Definition(kind, qualname.rsplit(".", 1)[-1], qualname,
                                         node.start_point[0] + 1, node.end_point[0] + 1, extends, implements))
            span_node = node.parent if node.type == "variable_declarator" and node.parent is not None else node
            spans.append((span_node.start_byte, span_node.end_byte, qualname))
            parent = node.parent
            if parent is not None and parent.type == "export_statement" and any(
                    c.type == "default" for c in parent.children):
                facts.default_export = qualname
    facts.calls = dotted_calls(callees, spans)
    return facts
