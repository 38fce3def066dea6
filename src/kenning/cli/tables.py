"""Tables that fit the terminal: ids are never cut, long text shortens or moves to a detail line.

Every table the CLI prints goes through `print_table`. Columns say what they hold: an `id`
column keeps its full width (so it can be copied into the next command), a `num` column is
right-aligned, a `text` column shrinks (with …) when the row is wider than the terminal. The
optional `detail` (a memory's content, a reason) is the last column when there is room for it
and otherwise its own indented line under the row, wrapped to the terminal width.
Commands that print a table also take `--json`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich.console import Console
from rich.text import Text

GAP = "  "
MIN_TEXT = 6  # a text column never shrinks below this (or its header)
MIN_INLINE_DETAIL = 40  # the detail stays a column only if it gets at least this many characters


@dataclass(frozen=True)
class Col:
    header: str
    value: str | Callable[[Mapping[str, Any]], object]  # a key of the row, or a function of it
    kind: Literal["id", "num", "text"] = "text"
    max_width: int = 32  # text columns: never wider than this

    def cell(self, row: Mapping[str, Any]) -> str:
        value = self.value(row) if callable(self.value) else row.get(self.value)
        return "" if value is None else " ".join(str(value).split())


def fmt(value: float | None, digits: int = 2, signed: bool = False) -> str:
    """A number with `digits` decimals, or '-' when missing."""
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def _widths(cols: Sequence[Col], cells: list[list[str]], room: int) -> list[int]:
    widths = []
    for i, col in enumerate(cols):
        natural = max([len(col.header), *(len(r[i]) for r in cells)])
        widths.append(natural if col.kind != "text" else min(natural, max(col.max_width, len(col.header))))
    over = sum(widths) + len(GAP) * (len(cols) - 1) - room
    while over > 0:  # shrink the widest text column, one character at a time
        shrinkable = [i for i, c in enumerate(cols) if c.kind == "text" and widths[i] > max(MIN_TEXT, len(c.header))]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda i: widths[i])
        widths[widest] -= 1
        over -= 1
    return widths


def _line(cols: Sequence[Col], widths: list[int], cells: list[str]) -> str:
    parts = []
    for col, width, cell in zip(cols, widths, cells):
        cell = cell if col.kind == "id" else _shorten(cell, width)
        parts.append(cell.rjust(width) if col.kind == "num" else cell.ljust(width))
    return GAP.join(parts)


def print_table(console: Console, cols: Sequence[Col], rows: Sequence[Mapping[str, Any]], *,
                detail: Col | None = None, title: str | None = None) -> None:
    """Print `rows` under `cols` within the console's width (see the module docstring)."""
    width = max(console.width, 40)
    cells = [[c.cell(r) for c in cols] for r in rows]
    details = [detail.cell(r) for r in rows] if detail else []
    widths = _widths(cols, cells, width)
    used = sum(widths) + len(GAP) * (len(cols) - 1)
    inline = detail is not None and width - used - len(GAP) >= MIN_INLINE_DETAIL
    if title:
        console.print(Text(title, style="bold"), soft_wrap=True)
    header = _line(cols, widths, [c.header for c in cols])
    header = header + GAP + detail.header if inline and detail is not None else header.rstrip()
    console.print(Text(header, style="bold"), soft_wrap=True)
    for row_cells, text in zip(cells, details or [""] * len(cells)):
        line = _line(cols, widths, row_cells)
        if inline:
            console.print(Text(line + GAP + _shorten(text, width - used - len(GAP))), soft_wrap=True)
            continue
        console.print(Text(line.rstrip()), soft_wrap=True)
        if text:
            for part in textwrap.wrap(text, width=width - 4, max_lines=3, placeholder=" …"):
                console.print(Text("    " + part, style="dim"), soft_wrap=True)
