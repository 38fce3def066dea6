"""Decision stage: per fact, top-k hybrid candidates → ADD / UPDATE / DELETE / NONE.

memory-pipeline-v2 "Decision Stage" (runShadowDecisions): this module makes no writes.
- No candidates ⇒ ADD at once, no LLM call, with the fact's own confidence.
- Otherwise the decision prompt lists the candidates; the answer is validated:
  unknown action, UPDATE/DELETE without a targetId or with one that is not among the
  candidates (hallucinated), and an empty reason are all dropped with a warning.
- Malformed output ⇒ no proposal for that fact + a warning (never raises on parsing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kenning.core.types import Viewer
from kenning.pipeline.extraction import Fact
from kenning.pipeline.parsing import parse_json_output
from kenning.pipeline.prompts import decision as prompt
from kenning.providers.llm import BaseLLMProvider, GenerateOptions

NO_CANDIDATES_REASON = "no similar memories: new information"


@dataclass
class Candidate:
    id: str
    content: str
    type: str = "fact"
    score: float = 0.0

    def for_prompt(self) -> prompt.CandidatePayload:
        return {"id": self.id, "type": self.type, "content": self.content}


# find_candidates(text, k, exclude_ids, project, viewer) -> best-first candidates (the service's hybrid
# recall), among the memories the source memory's author may see (viewer None: all)
CandidateFinder = Callable[[str, int, set[str], "str | None", "Viewer | None"], list[Candidate]]


@dataclass
class Proposal:
    action: str
    fact: Fact
    confidence: float
    reason: str
    target_id: str | None = None
    target_content: str | None = None
    candidate_ids: list[str] = field(default_factory=list)
    used_llm: bool = False
    review_needed: bool = False
    contradiction: str | None = None


def validate_decision(
    raw: str, fact: Fact, candidates: list[Candidate], warnings: list[str]
) -> Proposal | None:
    """Parse and check one decision answer; None (with a warning) when unusable."""
    parsed, parse_warnings = parse_json_output(raw)
    label = f"decision for {fact.content[:60]!r}"
    warnings.extend(f"{label}: {w}" for w in parse_warnings)
    if not isinstance(parsed, dict):
        warnings.append(f"{label}: no JSON object; fact skipped")
        return None
    action = str(parsed.get("action") or "").strip().upper()
    if action not in prompt.ACTIONS:
        warnings.append(f"{label}: unknown action {parsed.get('action')!r}; dropped")
        return None
    reason = parsed.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        warnings.append(f"{label}: empty reason; dropped")
        return None
    by_id = {c.id: c for c in candidates}
    target = parsed.get("targetId", parsed.get("target_id"))
    target = str(target) if target not in (None, "") else None
    if action in ("UPDATE", "DELETE"):
        if target is None:
            warnings.append(f"{label}: {action} without targetId; dropped")
            return None
        if target not in by_id:
            warnings.append(f"{label}: {action} targets {target!r}, not a candidate (hallucinated id); dropped")
            return None
    given = parsed.get("confidence")
    try:
        if given is None:
            raise ValueError("no confidence")
        confidence = min(1.0, max(0.0, float(given)))
    except (TypeError, ValueError):
        warnings.append(f"{label}: confidence {parsed.get('confidence')!r} is not a number; using 0")
        confidence = 0.0
    hit = by_id.get(target) if target else None
    return Proposal(
        action=action, fact=fact, confidence=confidence, reason=reason.strip()[:500],
        target_id=hit.id if hit else None, target_content=hit.content if hit else None,
        candidate_ids=list(by_id), used_llm=True,
    )


def decide(
    provider: BaseLLMProvider, fact: Fact, candidates: list[Candidate], warnings: list[str],
    *, timeout_s: float | None = None,
) -> Proposal | None:
    """One fact → one proposal (or None with warnings). Raises ProviderError on provider failure."""
    if not candidates:
        return Proposal("ADD", fact, fact.confidence, NO_CANDIDATES_REASON)
    opts = GenerateOptions(timeout_s=timeout_s, json_mode=True, task=prompt.TASK)
    fact_payload: prompt.FactPayload = {"content": fact.content, "type": fact.type, "confidence": fact.confidence}
    raw = provider.generate(prompt.build_prompt(fact_payload, [c.for_prompt() for c in candidates]), opts)
    return validate_decision(raw, fact, candidates, warnings)
