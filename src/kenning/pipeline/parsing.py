"""Turning LLM text into JSON without ever throwing: strip, parse, salvage, warn.

`parse_json_output(raw)` strips <think> blocks and code fences (providers.llm.clean_output),
parses the first JSON value, and when that fails salvages every complete flat `{...}` object
it can find (a truncated or chatty answer still yields its complete items). Problems come
back as warnings; callers decide what a partial result means.
"""

from __future__ import annotations

import json

from kenning.providers.llm import clean_output

_DECODER = json.JSONDecoder()


def _first_value(text: str) -> object:
    """The first complete JSON object/array in `text` (leading chatter allowed)."""
    for index, char in enumerate(text):
        if char in "{[":
            try:
                value, _ = _DECODER.raw_decode(text, index)
                return value
            except ValueError:
                return None
    return None


def salvage_objects(text: str) -> list[dict[str, object]]:
    """Every innermost-complete `{...}` object that parses, left to right, without overlaps."""
    found: list[dict[str, object]] = []
    index, end_of_last = 0, -1
    while True:
        index = text.find("{", index)
        if index < 0:
            return found
        try:
            value, end = _DECODER.raw_decode(text, index)
        except ValueError:
            index += 1
            continue
        if isinstance(value, dict) and index > end_of_last:
            found.append(value)
            end_of_last = end
            index = end
        else:
            index += 1


def parse_json_output(raw: str) -> tuple[object, list[str]]:
    """(parsed value or None, warnings): untrusted model output, for the caller to narrow. Never raises."""
    if not isinstance(raw, str) or not raw.strip():
        return None, ["empty LLM output"]
    text = clean_output(raw)
    try:
        return json.loads(text), []
    except ValueError:
        pass
    value = _first_value(text)
    if value is not None:
        return value, ["LLM output had text around the JSON; used the first JSON value"]
    return None, [f"LLM output is not valid JSON: {text[:120]!r}"]
