"""Decision prompt: one fact vs its top-k existing memories → ADD / UPDATE / DELETE / NONE."""

from __future__ import annotations

from typing import Literal, TypedDict

from pydantic import BaseModel, Field

from kenning.pipeline.prompts import schema_json
from kenning.providers.offline import render_task_block

TASK = "decision"
ACTIONS = ("ADD", "UPDATE", "DELETE", "NONE")


class DecisionOutput(BaseModel):
    action: Literal["ADD", "UPDATE", "DELETE", "NONE"] = Field(
        description="ADD: new knowledge. UPDATE: the fact replaces a candidate. DELETE: the fact says a "
        "candidate is no longer true. NONE: already known."
    )
    targetId: str | None = Field(None, description="Candidate id; required for UPDATE and DELETE.")
    confidence: float = Field(ge=0.0, le=1.0)
    reason: str = Field(min_length=1, description="One sentence: why this action.")


TEMPLATE = """You maintain a developer's long-term memory. Decide what to do with a NEW FACT given the
EXISTING MEMORIES most similar to it.

Actions:
- ADD: the fact is new information.
- UPDATE: the fact is a newer/corrected version of one existing memory (give its id as targetId).
- DELETE: the fact states that one existing memory is no longer true (give its id as targetId).
- NONE: the fact is already covered.
Only use ids from the list. Return ONLY a JSON object:
{{"action": "ADD"|"UPDATE"|"DELETE"|"NONE", "targetId": str|null, "confidence": 0..1, "reason": str}}

JSON schema of the answer:
{schema}

New fact:
{fact}

Existing memories:
{numbered}

Input (same data as JSON):
{block}
"""


class FactPayload(TypedDict):
    content: str
    type: str
    confidence: float


class CandidatePayload(TypedDict):
    id: str
    type: str
    content: str


def build_prompt(fact: FactPayload, candidates: list[CandidatePayload]) -> str:
    numbered = "\n".join(
        f"{i}. [id={c['id']}] ({c.get('type', 'fact')}) {c['content']}" for i, c in enumerate(candidates, 1)
    )
    schema = schema_json(DecisionOutput)
    return TEMPLATE.format(
        schema=schema, fact=f"({fact.get('type', 'fact')}) {fact['content']}", numbered=numbered,
        block=render_task_block(TASK, {"fact": fact, "candidates": candidates}),
    )
