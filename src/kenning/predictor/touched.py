"""Which candidate memories a session touched without anyone saying so (labels without an agent).

A memory is *touched* when the session's transcript (every turn, tool calls included) or its
prompts mention something specific to it:
  - an identifier the memory names: a file path or file name (`src/auth/jwt.py`, `jwt.py`),
    a snake_case / dotted / CamelCase name, or any token with a digit (`v2`, `ERR_1042`) —
    plain words never count, they match everything;
  - an entity the knowledge graph links to the memory (its name as a whole word), except
    speaker names (User, Assistant, ...).
Anything that would touch more than a quarter of the candidates (and more than three) is not
specific to any of them and is ignored. Pure functions over strings, so tests and
`kenning predictor labels` can show the reason.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./\-]*[A-Za-z0-9_]")
_CAMEL = re.compile(r"[a-z][A-Z]")
MIN_IDENTIFIER = 4
MIN_ENTITY = 3
SPEAKERS = frozenset({"user", "assistant", "human", "system", "tool", "claude", "agent", "ai"})
MAX_SHARE = 0.25  # a term touching more than this share of the candidates (and > 3) is not specific


def identifiers(text: str | None) -> set[str]:
    """Specific tokens: paths, file names, snake/dotted/Camel names, tokens with digits."""
    out: set[str] = set()
    for token in _TOKEN.findall(text or ""):
        token = token.strip(".-/")
        if len(token) < MIN_IDENTIFIER:
            continue
        specific = (any(ch.isdigit() for ch in token) or "_" in token or "/" in token
                    or ("." in token and not token.endswith(".")) or _CAMEL.search(token))
        if not specific or token.isdigit():
            continue
        low = token.lower()
        out.add(low)
        if "/" in low:  # a path also names its file
            out.add(low.rsplit("/", 1)[-1])
    return out


def touched_memories(session_text: str, contents: dict[str, str],
                     entities: dict[str, list[str]] | None = None) -> dict[str, str]:
    """{memory_id: why} for the memories whose identifiers or entities the session mentions."""
    said = identifiers(session_text)
    low = (session_text or "").lower()
    hits: dict[str, list[str]] = {}  # term -> memories it touches
    for memory_id, content in contents.items():
        for term in sorted(identifiers(content) & said):
            hits.setdefault(f"transcript names {term}", []).append(memory_id)
        for name in {n.strip().lower() for n in (entities or {}).get(memory_id, [])}:
            if (len(name) >= MIN_ENTITY and name not in SPEAKERS
                    and re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", low)):
                hits.setdefault(f"transcript mentions entity {name}", []).append(memory_id)
    cap = max(3, int(MAX_SHARE * len(contents)))
    out: dict[str, str] = {}
    for why, memory_ids in sorted(hits.items()):
        if len(memory_ids) > cap:
            continue
        for memory_id in memory_ids:
            out.setdefault(memory_id, why)
    return out
