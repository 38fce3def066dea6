"""Extraction prompt: raw memory text → discrete facts + entity triples (memory-pipeline-v2)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from kenning.pipeline.prompts import schema_json
from kenning.providers.offline import render_task_block

TASK = "extraction"
FACT_TYPES = ("fact", "preference", "decision", "procedural", "semantic")


class ExtractedFact(BaseModel):
    content: str = Field(description="One self-contained, reusable statement (10-2000 characters).")
    type: Literal["fact", "preference", "decision", "procedural", "semantic"] = Field(
        description="fact | preference | decision | procedural | semantic"
    )
    confidence: float = Field(ge=0.0, le=1.0, description="How sure the statement is true and durable, 0-1.")


class ExtractedEntity(BaseModel):
    source: str = Field(min_length=1, description="Entity the relation starts from, e.g. 'billing service'.")
    relationship: str = Field(min_length=1, description="Short verb phrase, e.g. 'uses', 'depends_on'.")
    target: str = Field(min_length=1, description="Entity the relation points to, e.g. 'PostgreSQL'.")
    confidence: float = Field(0.5, ge=0.0, le=1.0)


class ExtractionOutput(BaseModel):
    facts: list[ExtractedFact] = Field(default_factory=list, description="At most 20 facts.")
    entities: list[ExtractedEntity] = Field(default_factory=list, description="At most 50 triples.")


TEMPLATE = """You extract durable knowledge from a note written by or about a software developer.

Return ONLY a JSON object, no other text, with two arrays:
- "facts": discrete, reusable facts. Each: {{"content": str, "type": one of {types}, "confidence": 0..1}}.
  Make each fact self-contained (resolve "it"/"this" to names). Skip greetings, questions,
  ephemeral details (what someone is about to do right now) and anything not worth remembering.
- "entities": relationship triples. Each: {{"source": str, "relationship": str, "target": str, "confidence": 0..1}}.

Example input: "We switched billing from MySQL to PostgreSQL last week. Alice prefers pytest."
Example output:
{{"facts": [{{"content": "Billing switched from MySQL to PostgreSQL.", "type": "decision", "confidence": 0.9}},
            {{"content": "Alice prefers pytest for tests.", "type": "preference", "confidence": 0.85}}],
 "entities": [{{"source": "billing", "relationship": "uses", "target": "PostgreSQL", "confidence": 0.9}},
              {{"source": "PostgreSQL", "relationship": "replaced", "target": "MySQL", "confidence": 0.8}},
              {{"source": "Alice", "relationship": "prefers", "target": "pytest", "confidence": 0.85}}]}}

JSON schema of the answer:
{schema}

Input (the "content" field):
{block}
"""


def build_prompt(content: str) -> str:
    schema = schema_json(ExtractionOutput)
    return TEMPLATE.format(types=", ".join(FACT_TYPES), schema=schema,
                           block=render_task_block(TASK, {"content": content}))
