"""Prompts as modules: each pairs the prompt text with a Pydantic schema of the expected answer.

The input section of every prompt is a task block (providers.offline.render_task_block), so
the offline provider answers the same prompts with rules.
"""

from __future__ import annotations

import json
from functools import lru_cache

from pydantic import BaseModel


@lru_cache(maxsize=None)
def schema_json(model: type[BaseModel]) -> str:
    """A schema's compact JSON, built once per process (pydantic rebuilds it on every call: 15 ms of
    each extraction job on a busy 2-core machine, issue 36)."""
    return json.dumps(model.model_json_schema(), separators=(",", ":"))
