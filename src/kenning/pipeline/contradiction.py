"""Contradiction detection for UPDATE/DELETE proposals (memory-pipeline-v2).

Syntactic (fast path): at least two shared content tokens, then a negation-polarity
difference or an antonym pair (enabled/disabled, allow/deny, ...).
Semantic (slow path, behind `semantic_contradiction_enabled`): an LLM judgement, only for
UPDATE proposals with ≥ 3 shared tokens where the syntactic check said no. Advisory: on
timeout, provider error or a bad answer it returns "no contradiction" and never blocks.
A detected contradiction marks the proposal review_needed in its audit record.
"""

from __future__ import annotations

from kenning.core import telemetry
from kenning.core.errors import ProviderError
from kenning.pipeline.parsing import parse_json_output
from kenning.pipeline.prompts import contradiction as prompt
from kenning.providers.llm import BaseLLMProvider, GenerateOptions
from kenning.providers.offline_rules import antonym_conflict, has_negation, overlap

MIN_SHARED_SYNTACTIC = 2
MIN_SHARED_SEMANTIC = 3


def syntactic_contradiction(fact: str, other: str) -> str | None:
    """The reason two statements conflict on their surface, or None."""
    shared, _ = overlap(fact, other)
    if shared < MIN_SHARED_SYNTACTIC:
        return None
    if has_negation(fact) != has_negation(other):
        return "negation polarity differs"
    pair = antonym_conflict(fact, other)
    return f"antonym pair {pair[0]}/{pair[1]}" if pair else None


def semantic_contradiction(
    provider: BaseLLMProvider, fact: str, other: str, *, timeout_s: float
) -> str | None:
    """LLM judgement; None on 'no', on error and on timeout (advisory only)."""
    opts = GenerateOptions(timeout_s=timeout_s, json_mode=True, task=prompt.TASK)
    try:
        raw = provider.generate(prompt.build_prompt(fact, other), opts)
    except ProviderError as exc:
        telemetry.log_event("pipeline", f"semantic contradiction check skipped: {exc}", level="warning")
        return None
    parsed, _ = parse_json_output(raw)
    if not isinstance(parsed, dict) or parsed.get("contradicts") is not True:
        return None
    reasoning = str(parsed.get("reasoning") or "").strip()
    return f"semantic: {reasoning[:200]}" if reasoning else "semantic contradiction"


def check(
    provider: BaseLLMProvider | None, action: str, fact: str, other: str, *, semantic_enabled: bool,
    timeout_s: float,
) -> str | None:
    """Syntactic first; semantic for UPDATE with enough overlap when enabled."""
    found = syntactic_contradiction(fact, other)
    if found or not semantic_enabled or provider is None or action != "UPDATE":
        return found
    shared, _ = overlap(fact, other)
    if shared < MIN_SHARED_SEMANTIC:
        return None
    return semantic_contradiction(provider, fact, other, timeout_s=timeout_s)
