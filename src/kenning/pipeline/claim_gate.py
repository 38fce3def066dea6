"""The LLM claim gate (issue 22): the session's candidate claims judged by the configured LLM.

`ClaimGate(provider)` is what the service hands the sessions as `SessionDeps.claim_gate` when an
LLM (ollama / openai / claude-cli) is configured: called with the offline claim test's candidates
(`[{id, text, type, speaker, rule, antecedent}]`), it sends one prompt (pipeline.prompts.claims)
and answers `{id: {durable, type, confidence, reason, rewrite}}` for every candidate the model judged with a
valid answer (pydantic-validated; an invalid entry is left out, so the rules' verdict stands for
it). Provider failures raise ProviderError; the caller keeps the rules' verdicts. Never called
inside a write transaction.
"""

from __future__ import annotations


from pydantic import ValidationError

from kenning.pipeline.parsing import parse_json_output
from kenning.pipeline.prompts import claims as prompt
from kenning.core.claims import ClaimCandidate, ClaimVerdict
from kenning.providers.llm import BaseLLMProvider, GenerateOptions

MAX_CANDIDATES = 40


class ClaimGate:
    def __init__(self, provider: BaseLLMProvider, timeout_s: float = 60.0) -> None:
        self.provider = provider
        self.timeout_s = timeout_s

    def __call__(self, candidates: list[ClaimCandidate]) -> dict[str, ClaimVerdict]:
        if not candidates:
            return {}
        batch = candidates[:MAX_CANDIDATES]
        raw = self.provider.generate(prompt.build_prompt(batch),
                                     GenerateOptions(timeout_s=self.timeout_s, json_mode=True, task=prompt.TASK))
        parsed, _ = parse_json_output(raw)
        items = parsed.get("claims") if isinstance(parsed, dict) else parsed if isinstance(parsed, list) else []
        asked = {str(c["id"]) for c in batch}
        out: dict[str, ClaimVerdict] = {}
        for item in items or []:
            try:
                judged = prompt.ClaimJudgement.model_validate(item)
            except ValidationError:
                continue  # the rules' verdict stands for this one
            if judged.id in asked:
                out[judged.id] = ClaimVerdict(id=judged.id, durable=judged.durable, type=judged.type,
                                             confidence=judged.confidence, reason=judged.reason,
                                             rewrite=judged.rewrite)  # model_dump's keys
        return out
