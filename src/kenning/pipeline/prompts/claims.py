"""Claim-gate prompt (issue 22): candidate claims from a session → durable claim or chatter, type, confidence.

The offline claim test (kenning.core.claims) proposes the candidates; with an LLM configured each
one is judged again here before it is written. The answer passes the seeds' confidence gate
(minFactConfidenceForWrite 0.7): below it a claim is written `needs_review`, chatter is not written.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from kenning.core.claims import ClaimCandidate
from kenning.pipeline.prompts import schema_json
from kenning.providers.offline import render_task_block

TASK = "claim_gate"
CLAIM_TYPES = ("constraint", "decision", "preference", "gotcha", "fact")


class ClaimJudgement(BaseModel):
    id: str = Field(min_length=1, description="The candidate's id, as given.")
    durable: bool = Field(description="True: a durable claim about the project (a rule, decision, preference, "
                          "gotcha or fact that will still hold in later sessions). False: chatter — a question, "
                          "guess, hedge, wish, acknowledgement, plan, progress report, bug report or a fragment "
                          "that means nothing without its conversation.")
    type: Literal["constraint", "decision", "preference", "gotcha", "fact"] = Field(
        description="constraint: a rule to follow; decision: a choice that was made; preference: how someone "
        "likes things done; gotcha: a trap or surprising behaviour; fact: anything else durable.")
    confidence: float = Field(ge=0.0, le=1.0, description="How sure it is a durable, asserted claim, 0-1.")
    reason: str = Field("", max_length=300, description="One short sentence: why.")
    rewrite: str = Field("", max_length=600, description="Only for a durable claim whose subject is not named in "
                         "its own words but is clear from its prefix, the question it answers or the sentence after "
                         "'after:': the claim as one self-contained sentence that names its subject and keeps every "
                         "code name. Empty otherwise.")


class ClaimGateOutput(BaseModel):
    claims: list[ClaimJudgement] = Field(default_factory=list)


TEMPLATE = """You decide which sentences from a coding session are worth remembering for future sessions.

Each candidate was said in a chat between a developer (the user) and a coding agent. Keep a candidate
only when it is a durable claim about the project: declarative and asserted, its subject clear on its
own (or from the question it answers), said by the user or accepted by the user. Reject chatter:
questions, guesses and hedges ("I think", "maybe"), wishes, acknowledgements ("Exactly."), plans and
progress reports ("I'll run the tests", "the tests pass"), bug reports and requests for work now ("Run
the ledger-sync tests.", "Add a flag to the CLI." — the task, not a rule; "Always run the tests before
pushing." is a rule), and fragments that mean nothing alone.

A kept claim must read whole at the start of another task. When its subject is only in a `code` prefix,
in "(answering: ...)" or "(after: ...)", give "rewrite": the claim as one self-contained sentence that names
its subject, e.g. "`parse_quantity`: Case-INSENSITIVE, always. (answering: Should unit suffixes be
case-sensitive?)" -> "parse_quantity unit suffixes are case-insensitive, always." Otherwise leave it empty.

Return ONLY a JSON object: {{"claims": [{{"id": str, "durable": bool, "type": one of {types},
"confidence": 0..1, "reason": str, "rewrite": str}}]}} with one entry per candidate.

JSON schema of the answer:
{schema}

Candidates:
{numbered}

Input (same data as JSON):
{block}
"""


def build_prompt(candidates: list[ClaimCandidate]) -> str:
    numbered = "\n".join(
        f"{c['id']}. ({c.get('speaker') or 'unknown'}, proposed {c.get('type') or 'fact'}) {c['text']}"
        + (f"  [answering: {c['antecedent']}]" if c.get("antecedent") else "") for c in candidates)
    schema = schema_json(ClaimGateOutput)
    return TEMPLATE.format(types="|".join(CLAIM_TYPES), schema=schema, numbered=numbered,
                           block=render_task_block(TASK, {"candidates": candidates}))
