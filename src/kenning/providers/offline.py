"""The offline LLM provider: deterministic rules behind the same generate() interface.

Every pipeline prompt carries its input as a machine-readable task block::

    <<<KENNING_TASK:extraction>>>
    {"content": "..."}
    <<<END_KENNING_TASK>>>

A real LLM reads the block as the input section of the prompt; this provider parses it,
runs the rule handler registered for the task and answers JSON text exactly like an LLM
would, so the same parsing/validation code runs with or without an LLM. The handlers
(extraction, decision, contradiction, hints, claim_gate) live in offline_rules.py and are named in `_TASKS`
below, fn(payload: dict) -> dict | list.
A prompt without a task block gets an empty JSON object (and a ProviderError for an
unknown task, so a missing handler is loud).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from kenning.core.errors import ProviderError
from kenning.providers import offline_rules
from kenning.providers.llm import BaseLLMProvider, GenerateOptions, Generation, estimate_tokens

OFFLINE_MODEL = "offline-rules-v1"
_BLOCK = re.compile(r"<<<KENNING_TASK:([a-z0-9_\-]+)>>>\s*(.*?)\s*<<<END_KENNING_TASK>>>", re.DOTALL)

# A handler takes its task's payload (offline_rules' *Task TypedDicts: the JSON the pipeline's prompt
# builder rendered, so its shape is the builder's) and answers a JSON-able value.
TaskHandler = Callable[[Any], object]
_TASKS: Mapping[str, TaskHandler] = {
    "extraction": offline_rules.extract,
    "decision": offline_rules.decide,
    "contradiction": offline_rules.contradiction,
    "hints": offline_rules.hints,
    "claim_gate": offline_rules.claim_gate,
}


def render_task_block(task: str, payload: Mapping[str, object]) -> str:
    """The input section of a prompt: a task tag and the input as JSON."""
    if not re.fullmatch(r"[a-z0-9_\-]+", task):
        raise ValueError(f"bad task name {task!r}")
    body = json.dumps(payload, ensure_ascii=False, indent=1).replace("<<<", "< < <")
    return f"<<<KENNING_TASK:{task}>>>\n{body}\n<<<END_KENNING_TASK>>>"


def parse_task_block(prompt: str) -> tuple[str, dict[str, object]] | None:
    match = _BLOCK.search(prompt)
    if not match:
        return None
    try:
        payload = json.loads(match.group(2))
    except ValueError as exc:
        raise ProviderError(f"offline: task block for {match.group(1)!r} is not JSON: {exc}") from exc
    return match.group(1), payload if isinstance(payload, dict) else {"value": payload}


def known_tasks() -> list[str]:
    return sorted(_TASKS)


class OfflineProvider(BaseLLMProvider):
    """Rule-based, deterministic, no network, spends no token budget."""

    name = "offline"
    counts_tokens = False

    def __init__(self) -> None:
        super().__init__(OFFLINE_MODEL, timeout_s=1.0)

    def complete(self, prompt: str, opts: GenerateOptions) -> Generation:
        parsed = parse_task_block(prompt)
        if parsed is None:
            text = "{}"
        else:
            task, payload = parsed
            handler = _TASKS.get(task)
            if handler is None:
                raise ProviderError(f"offline: no rule handler for task {task!r}; known: {known_tasks()}")
            text = json.dumps(handler(payload), ensure_ascii=False)
        return Generation(text, estimate_tokens(prompt), estimate_tokens(text), self.model)

    def available(self) -> bool:
        return True
