"""Shared tree-walking helpers for the extractors: node text, first syntax error, call scopes."""

from __future__ import annotations

import bisect
import re

import tree_sitter as ts

from kenning.codegraph.facts import Call

DOTTED = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$")


def text(node: ts.Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def first_error_line(root: ts.Node) -> int | None:
    """1-based line of the first ERROR/MISSING node, None for a clean parse."""
    if not root.has_error:
        return None
    stack = [root]
    while stack:
        node = stack.pop()
        inner = [c for c in node.children if c.has_error or c.is_error or c.is_missing]
        if (node.is_error or node.is_missing) and not inner:
            return node.start_point[0] + 1
        stack.extend(reversed(inner))
    return root.start_point[0] + 1


class ScopeIndex:
    """Maps a byte offset to the qualname of the innermost definition node containing it."""

    def __init__(self, spans: list[tuple[int, int, str]]) -> None:
        self.spans = sorted(spans)
        self.starts = [s for s, _, _ in self.spans]

    def at(self, offset: int) -> str:
        i = bisect.bisect_right(self.starts, offset) - 1
        best = ""
        best_size = None
        # Nested spans start before `offset`; scan back over the few candidates that contain it.
        while i >= 0:
            start, end, name = self.spans[i]
            if start <= offset < end and (best_size is None or end - start < best_size):
                best, best_size = name, end - start
            i -= 1
        return best


def dotted_calls(callees: list[ts.Node], spans: list[tuple[int, int, str]]) -> list[Call]:
    """Calls whose callee is a dotted name, each in the innermost definition span holding it."""
    scopes = ScopeIndex(spans)
    return [Call(scopes.at(node.start_byte), text(node), node.start_point[0] + 1)
            for node in callees if DOTTED.match(text(node))]
