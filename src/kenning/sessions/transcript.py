"""Read a session transcript into (role, text) turns: Claude Code JSONL or plain text.

Claude Code writes one JSON object per line with `type` ('user' / 'assistant' / …) and a
`message` whose `content` is a string or a list of blocks (text, tool_use, tool_result).
Anything else is treated as plain text, with `User:` / `Assistant:` prefixes honoured.
"""

from __future__ import annotations

import json
import re
from kenning.core.events import Turn

_ROLE_PREFIX = re.compile(r"^\s*(user|human|assistant|claude|agent)\s*:\s*", re.IGNORECASE)


__all__ = ["Turn", "parse_transcript", "last_assistant_text"]


def _block_text(block) -> tuple[str, str]:
    if isinstance(block, str):
        return "text", block
    if not isinstance(block, dict):
        return "text", ""
    kind = block.get("type")
    if kind == "text":
        return "text", str(block.get("text", ""))
    if kind == "tool_use":
        return "tool", f"{block.get('name', 'tool')}: {json.dumps(block.get('input', {}), default=str)[:2000]}"
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            content = " ".join(_block_text(b)[1] for b in content)
        return "tool", str(content or "")[:2000]
    return "text", ""


def _jsonl_turns(lines: list[str]) -> list[Turn] | None:
    turns: list[Turn] = []
    parsed_any = False
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            return None
        if not isinstance(entry, dict):
            return None
        parsed_any = True
        message = entry.get("message") if isinstance(entry.get("message"), dict) else entry
        role = message.get("role") or entry.get("type") or entry.get("role")
        if role not in ("user", "assistant"):
            continue
        content = message.get("content", "")
        blocks = content if isinstance(content, list) else [content]
        texts, tools = [], []
        for block in blocks:
            kind, text = _block_text(block)
            if text:
                (tools if kind == "tool" else texts).append(text)
        at = entry.get("timestamp") if isinstance(entry.get("timestamp"), str) else None
        if texts:
            turns.append(Turn(role, "\n".join(texts), at))
        if tools:
            turns.append(Turn("tool", "\n".join(tools), at))
    return turns if parsed_any else None


def parse_transcript(text: str) -> list[Turn]:
    """Turns in order; never raises."""
    if not text or not text.strip():
        return []
    lines = text.splitlines()
    if lines and lines[0].lstrip().startswith("{"):
        turns = _jsonl_turns(lines)
        if turns is not None:
            return turns
    turns: list[Turn] = []
    role, buffer = "user", []
    for line in lines:
        match = _ROLE_PREFIX.match(line)
        if match:
            if buffer:
                turns.append(Turn(role, "\n".join(buffer).strip()))
            who = match.group(1).lower()
            role = "user" if who in ("user", "human") else "assistant"
            buffer = [line[match.end():]]
        else:
            buffer.append(line)
    if buffer and "\n".join(buffer).strip():
        turns.append(Turn(role, "\n".join(buffer).strip()))
    return turns


def last_assistant_text(text: str) -> str:
    """The most recent assistant message in a transcript (or '')."""
    for turn in reversed(parse_transcript(text)):
        if turn.role == "assistant":
            return turn.text
    return ""
