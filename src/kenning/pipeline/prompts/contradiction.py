"""Semantic contradiction prompt: do two statements contradict each other?"""

from __future__ import annotations


from pydantic import BaseModel, Field

from kenning.pipeline.prompts import schema_json
from kenning.providers.offline import render_task_block

TASK = "contradiction"


class ContradictionOutput(BaseModel):
    contradicts: bool = Field(description="True when both cannot be true at the same time.")
    confidence: float = Field(ge=0.0, le=1.0)
    reasoning: str = Field("", description="One sentence.")


TEMPLATE = """Do these two statements about a software project contradict each other (they cannot both
be true now, e.g. "uses PostgreSQL" vs "migrated to MongoDB")?
Return ONLY a JSON object: {{"contradicts": true|false, "confidence": 0..1, "reasoning": str}}

JSON schema of the answer:
{schema}

Statement A: {a}
Statement B: {b}

Input (same data as JSON):
{block}
"""


def build_prompt(statement_a: str, statement_b: str) -> str:
    schema = schema_json(ContradictionOutput)
    return TEMPLATE.format(schema=schema, a=statement_a, b=statement_b,
                           block=render_task_block(TASK, {"statement_a": statement_a,
                                                          "statement_b": statement_b}))
