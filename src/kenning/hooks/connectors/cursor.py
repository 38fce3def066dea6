"""`kenning connect cursor`: the kenning MCP server in Cursor's `mcp.json` (a project's
`.cursor/mcp.json`, or `~/.cursor/mcp.json`), and `.cursor/rules/kenning.mdc`: the project's
standing rules as a Cursor rule that always applies.

Cursor has no hooks kenning can use, so its agent sees memory two ways: the MCP tools it may
call, and the rule file, which Cursor adds to every request. The rule file holds the rules a
session start would show unasked — decisions, constraints, preferences and gotchas of this
project that are pinned, verified by the user, or held with confidence — and is rewritten by
`kenning connect cursor --rules` (run it when the rules change; it is cheap). A rule file that
is not kenning's is never overwritten.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TypedDict

from kenning.hooks.connectors.files import remove_owned, write_owned
from kenning.hooks.install import Outcome, install_mcp, uninstall_mcp

RULE_TYPES = ("decision", "constraint", "preference", "gotcha")
MIN_CONFIDENCE = 0.75  # the CLI passes sessions.ranking.standing_min_confidence
MAX_RULES = 40
MAX_RULE_CHARS = 400
HEADER = "<!-- kenning: the standing rules of project {project}; rewritten by `kenning connect cursor --rules` -->"


class ListedMemory(TypedDict, total=False):
    """A memory as the API lists it (core.types.Memory.to_dict): the fields the rule file reads."""

    id: str
    content: str
    type: str
    importance: float
    confidence: float
    pinned: bool
    needs_review: bool
    user_verified: bool
    superseded_by: str | None
    is_deleted: bool
    created_at: str


def mcp_path(project: Path | None) -> Path:
    return (project if project is not None else Path.home()) / ".cursor" / "mcp.json"


def rules_path(project_dir: Path) -> Path:
    return project_dir / ".cursor" / "rules" / "kenning.mdc"


def standing(memories: Iterable[ListedMemory], min_confidence: float = MIN_CONFIDENCE) -> list[ListedMemory]:
    """The memories a session start shows unasked as rules: live, not waiting for review, of a rule
    type, and pinned, user-verified or held with at least `min_confidence`; strongest first."""
    kept = [
        m for m in memories
        if m.get("type") in RULE_TYPES and not m.get("is_deleted") and not m.get("superseded_by")
        and not m.get("needs_review")
        and (m.get("pinned") or m.get("user_verified") or float(m.get("confidence") or 0) >= min_confidence)
    ]
    kept.sort(key=lambda m: (not m.get("pinned"), not m.get("user_verified"), -float(m.get("importance") or 0),
                             m.get("created_at") or ""))
    return kept[:MAX_RULES]


def render_rules(project: str, rules: Sequence[ListedMemory]) -> str:
    lines = ["---", f"description: Standing rules of {project}, kept by kenning (memory for coding agents)",
             "alwaysApply: true", "---", HEADER.format(project=project), ""]
    if not rules:
        lines.append("(kenning holds no standing rules for this project yet)")
    for memory in rules:
        text = " ".join(str(memory.get("content") or "").split())
        if len(text) > MAX_RULE_CHARS:
            text = text[: MAX_RULE_CHARS - 1] + "…"
        lines.append(f"- {text} ({memory.get('type')}, kenning {memory.get('id')})")
    return "\n".join(lines) + "\n"


def _is_ours(path: Path) -> bool:
    try:
        return "<!-- kenning: the standing rules" in path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False


def write_rules(project_dir: Path, project: str, rules: Sequence[ListedMemory]) -> Outcome:
    path = rules_path(project_dir)
    if path.exists() and not _is_ours(path):
        return Outcome(path, False, f"{path} is not kenning's; nothing was changed")
    text = render_rules(project, rules)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return Outcome(path, False, f"{path} is current ({len(rules)} rule(s))")
    write_owned(path, text)
    return Outcome(path, True, f"wrote {len(rules)} standing rule(s) of {project} to {path}")


def remove_rules(project_dir: Path) -> Outcome:
    path = rules_path(project_dir)
    if not path.exists() or not _is_ours(path):
        return Outcome(path, False, f"no kenning rule file at {path}")
    remove_owned(path)
    return Outcome(path, True, f"removed {path}")


def install(project: Path | None, env: dict[str, str] | None) -> list[str]:
    return [install_mcp(mcp_path(project), env).message]


def uninstall(project: Path | None, project_dir: Path) -> list[str]:
    rules = remove_rules(project_dir).message  # first: the MCP file's folder may then be left empty, and go
    return [uninstall_mcp(mcp_path(project)).message, rules]
