"""The text an agent sees: memories grouped by kind, each labelled with its id, in a budget.

Session start gets a block of memories (the predictor's status line is for the user: the dashboard,
`kenning predictor status`, never the model's context); prompts get a shorter block plus a rating
request naming the ids to rate (agent-relevance-feedback seed): through kenning's MCP tool
`memory_feedback` where its server is connected, else the `<memory-feedback>` tag appended to the
answer (issue 32: ratings without clutter in the answers the user reads).
"""

from __future__ import annotations

from typing import TypedDict

class InjectItem(TypedDict):
    """One memory to render: its id, content and type (None: a fact)."""
    memory_id: str
    content: str
    type: str | None


GROUPS: list[tuple[str, frozenset[str]]] = [
    ("Constraints and decisions", frozenset({"constraint", "decision", "requirement"})),
    ("Preferences", frozenset({"preference"})),
    ("Gotchas and known errors", frozenset({"gotcha", "error_pattern", "dead_end"})),
    ("How to", frozenset({"procedural", "workflow_recipe", "pattern", "prefetch_pattern"})),
    ("Recent work", frozenset({"work_state", "summary", "episodic", "work_unit_outcome", "task_calibration"})),
]
OTHER = "Facts and context"
CONTINUITY = "Where the last session left off"
CONTINUING = "Continuing the task in progress (useful in the last session)"
MAX_ITEM_CHARS = 600

# The rating request rides on every block that shows memories: kept short (it was 390 characters of a 2,000-character
# opening). The scale and the reply's form are the agent-relevance-feedback seed's.
FEEDBACK_REQUEST = """<memory-feedback>
Rate these memories for your last response: end it with ONLY a JSON object of scores in these tags, e.g.
<memory-feedback>{{"{example}": 0.8}}</memory-feedback>; -1 misled to 1 shaped it, 0 unused; omit what you can't judge.
IDs: {ids}
</memory-feedback>"""

TOOL_REQUEST = """<memory-feedback>
Rate these memories for your last response with one call of kenning's MCP tool memory_feedback
(mcp__kenning__memory_feedback), {{"<id>": score}}, -1 misled to 1 shaped it, 0 unused; omit what you can't judge;
no ratings in your answer.
IDs: {ids}
</memory-feedback>"""


def group_of(memory_type: str) -> str:
    for title, types in GROUPS:
        if memory_type in types:
            return title
    return OTHER


def item_line(memory_id: str, content: str) -> str:
    text = " ".join(content.split())
    if len(text) > MAX_ITEM_CHARS:
        text = text[: MAX_ITEM_CHARS - 1] + "…"
    return f"- [{memory_id}] {text}"


def item_cost(content: str) -> int:
    """Characters one memory costs in the block (its line plus id and bullet)."""
    return min(len(" ".join(content.split())), MAX_ITEM_CHARS) + 24


def render_block(
    items: list[InjectItem], *, header: str, status_line: str | None = None, tag: str = "kenning-memories",
    continuity: str | None = None, continuing: list[InjectItem] | None = None,
) -> str:
    """items: dicts with memory_id, content, type, in rank order; `continuing`: the task in progress (rated
    useful in the project's latest session), one group after the standing rules; `continuity`: the one
    line about the project's latest session, after them. Empty string when nothing to say."""
    if not items and not status_line and not continuity and not continuing:
        return ""
    lines = [f"<{tag}>"]
    if status_line:
        lines.append(status_line)
    if items or continuity or continuing:
        lines.append(header)
        order = [title for title, _ in GROUPS] + [OTHER]
        grouped: dict[str, list[str]] = {}
        for item in items:
            grouped.setdefault(group_of(item.get("type") or "fact"), []).append(
                item_line(item["memory_id"], item.get("content") or "")
            )
        for title in order:
            if title in grouped:
                lines.append(f"## {title}")
                lines.extend(grouped[title])
    if continuing:
        lines.append(f"## {CONTINUING}")
        lines.extend(item_line(item["memory_id"], item.get("content") or "") for item in continuing)
    if continuity:
        lines.append(f"## {CONTINUITY}")
        lines.append(f"- {' '.join(continuity.split())[:MAX_ITEM_CHARS]}")
    lines.append(f"</{tag}>")
    return "\n".join(lines)


def session_start_text(items: list[InjectItem], continuity: str | None = None,
                       continuing: list[InjectItem] | None = None) -> str:
    """Session start's block; the header asks for ids only when the block shows one (the continuity line alone
    names none)."""
    cited = bool(items or continuing)
    return render_block(
        items, continuity=continuity, continuing=continuing,
        header="Memories from earlier sessions" + (" (ids in brackets; cite an id when you rely on one):" if cited else ":"),
    )


def prompt_text(items: list[InjectItem], feedback_ids: list[str], *, rate_with_tool: bool = False) -> str:
    """The prompt's block and, when it names ids to rate, the request: the MCP tool's where
    `rate_with_tool` (kenning's MCP server is connected in the session's directory), else the tag."""
    block = render_block(items, header="Memories relevant to this prompt:") if items else ""
    if not feedback_ids:
        return block
    template = TOOL_REQUEST if rate_with_tool else FEEDBACK_REQUEST
    request = template.format(ids=", ".join(feedback_ids), example=feedback_ids[0])
    return f"{block}\n{request}" if block else request
