"""Query type detection (memory-system-v5): picks the fusion weights."""

from __future__ import annotations

import re

from kenning.retrieval.config import QueryType

_IDENTIFIER = re.compile(r"[a-z][A-Z]|_[a-z]")
STRUCTURAL_TOOLS = frozenset({"analyzeImpact", "getDependencies"})


def detect_query_type(query: str, recent_tool_calls: list[str] | None = None) -> QueryType:
    if _IDENTIFIER.search(query) or "/" in query:
        return QueryType.IDENTIFIER
    if any(t in STRUCTURAL_TOOLS for t in recent_tool_calls or ()):
        return QueryType.STRUCTURAL
    return QueryType.SEMANTIC
