"""Extraction stage: one LLM pass from raw memory text to validated facts and entity triples.

Validation is strict and partial-failure safe (memory-pipeline-v2 "Extraction Stage"):
input truncated to 12,000 chars before the prompt; at most 20 facts and 50 entities; facts
shorter than 10 chars rejected, longer than 2,000 truncated; an unknown type is coerced to
`fact` with a warning; an entity needs non-empty source, relationship and target.
Malformed output never raises: whatever parses is kept and the rest becomes warnings.
Provider failures (timeout, unreachable, budget) DO raise ProviderError: the job retries.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict, cast

from kenning.core.claims import RULE_TYPES
from kenning.core.config_pipeline import ExtractionSettings
from kenning.core.text import STOP_WORDS, word_tokens
from kenning.pipeline.parsing import parse_json_output, salvage_objects
from kenning.pipeline.prompts import extraction as prompt
from kenning.providers.llm import BaseLLMProvider, GenerateOptions, clean_output
from kenning.store.graph import TripleIn


@dataclass
class Fact:
    content: str
    type: str = "fact"
    confidence: float = 0.5
    evidence: dict[str, Any] = field(default_factory=dict)  # the claim test's evidence (metadata.claim)


@dataclass
class Triple:
    source: str
    relationship: str
    target: str
    confidence: float = 0.5


class ExtractionSummary(TypedDict):
    facts: int
    entities: int
    input_truncated: bool


@dataclass
class ExtractionResult:
    facts: list[Fact] = field(default_factory=list)
    entities: list[Triple] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    input_truncated: bool = False
    raw_output: str = ""

    def summary(self) -> ExtractionSummary:
        return {"facts": len(self.facts), "entities": len(self.entities),
                "input_truncated": self.input_truncated}

    def triples(self) -> list[TripleIn]:
        return [cast(TripleIn, asdict(t)) for t in self.entities]


def _confidence(value: object, default: float, warnings: list[str], what: str) -> float:
    """A confidence from model output (untrusted): a number in [0, 1], else `default` with a warning."""
    try:
        if not isinstance(value, (int, float, str)):
            raise TypeError(type(value).__name__)  # None, a list, an object: JSON that float() refuses too
        number = float(value)
    except (TypeError, ValueError):
        warnings.append(f"{what}: confidence {value!r} is not a number; using {default}")
        return default
    if not 0.0 <= number <= 1.0:
        warnings.append(f"{what}: confidence {number} clamped to [0, 1]")
    return min(1.0, max(0.0, number))


def validate_fact(item: object, cfg: ExtractionSettings, warnings: list[str], index: int) -> Fact | None:
    if not isinstance(item, dict):
        warnings.append(f"fact {index}: not an object ({type(item).__name__}); dropped")
        return None
    content = item.get("content")
    if not isinstance(content, str) or len(content.strip()) < cfg.min_fact_chars:
        warnings.append(f"fact {index}: content missing or shorter than {cfg.min_fact_chars} chars; dropped")
        return None
    content = content.strip()
    if len(content) > cfg.max_fact_chars:
        warnings.append(f"fact {index}: truncated from {len(content)} to {cfg.max_fact_chars} chars")
        content = content[: cfg.max_fact_chars]
    kind = item.get("type")
    if kind not in prompt.FACT_TYPES:
        warnings.append(f"fact {index}: unknown type {kind!r} coerced to 'fact'")
        kind = "fact"
    confidence = _confidence(item.get("confidence"), 0.5, warnings, f"fact {index}")
    evidence = item.get("evidence")
    if not isinstance(evidence, dict) or not evidence.get("rule"):  # an LLM's fact: its own confidence is the evidence
        evidence = {"rule": "llm-extraction", "speaker": "unknown", "accepted": None, "repetition": 1,
                    "confidence": confidence, "cues": [], "antecedent": None, "ruleset": "llm"}
    return Fact(content, kind, confidence, {k: evidence[k] for k in list(evidence)[:12]})


def validate_entity(item: object, warnings: list[str], index: int) -> Triple | None:
    if not isinstance(item, dict):
        warnings.append(f"entity {index}: not an object; dropped")
        return None
    parts = [item.get(k) for k in ("source", "relationship", "target")]
    if not all(isinstance(p, str) and p.strip() for p in parts):
        warnings.append(f"entity {index}: needs non-empty source, relationship and target; dropped")
        return None
    src, rel, dst = (str(p).strip()[:200] for p in parts)
    return Triple(src, rel, dst, _confidence(item.get("confidence", 0.5), 0.5, warnings, f"entity {index}"))


def _items(parsed: object, raw: str, warnings: list[str]) -> tuple[list[object], list[object]]:
    """Fact and entity items from a parsed answer, or salvaged from a broken one."""
    if isinstance(parsed, dict):
        facts, entities = parsed.get("facts", []), parsed.get("entities", [])
        if not isinstance(facts, list):
            warnings.append("'facts' is not a list; ignored")
            facts = []
        if not isinstance(entities, list):
            warnings.append("'entities' is not a list; ignored")
            entities = []
        return facts, entities
    if isinstance(parsed, list):
        warnings.append("answer is a bare list; read it as facts")
        return parsed, []
    objects = salvage_objects(clean_output(raw))
    if objects:
        warnings.append(f"salvaged {len(objects)} complete object(s) from malformed output")
    facts = [o for o in objects if "content" in o]
    entities = [o for o in objects if "source" in o or "target" in o]
    return facts, entities


def validate_output(raw: str, cfg: ExtractionSettings) -> ExtractionResult:
    """Parse and validate an extraction answer; never raises."""
    parsed, warnings = parse_json_output(raw)
    result = ExtractionResult(warnings=list(warnings), raw_output=raw[:4000])
    fact_items, entity_items = _items(parsed, raw, result.warnings)
    if len(fact_items) > cfg.max_facts:
        result.warnings.append(f"{len(fact_items)} facts; kept the first {cfg.max_facts}")
        fact_items = fact_items[: cfg.max_facts]
    if len(entity_items) > cfg.max_entities:
        result.warnings.append(f"{len(entity_items)} entities; kept the first {cfg.max_entities}")
        entity_items = entity_items[: cfg.max_entities]
    seen: set[str] = set()
    for index, item in enumerate(fact_items):
        fact = validate_fact(item, cfg, result.warnings, index)
        if fact is not None and fact.content.lower() not in seen:
            seen.add(fact.content.lower())
            result.facts.append(fact)
    for index, item in enumerate(entity_items):
        triple = validate_entity(item, result.warnings, index)
        if triple is not None:
            result.entities.append(triple)
    return result


STATED_FACT = "stated-fact"  # the claim test's rule for a plain statement (claims.judge with allow_fact)
RESTATES_SHARE = 0.6  # a plain fact whose content words are this share of its source's restates the source


def _content_words(text: str) -> set[str]:
    return {t.strip(".'-:") for t in word_tokens(text)} - STOP_WORDS - {""}


def restates_source(fact: Fact, source: str) -> bool:
    """A plain fact the claim test kept without claim language (evidence rule `stated-fact`, not a
    rule / decision / preference / gotcha) that says what its whole source memory says: its content
    words are at least RESTATES_SHARE of the source's ("Gotcha: Stripe sends duplicate webhook events;
    dedupe on event.id …" -> "Stripe sends duplicate webhook events; dedupe on event.id …"). Stored
    apart it is only a second copy of the raw memory, which already holds it. An LLM's fact is its
    own judgement (and may be typed by the draft rules on the way in): not second-guessed here."""
    if fact.type in RULE_TYPES or fact.evidence.get("rule") != STATED_FACT:
        return False  # typing is what the copy adds: a constraint stands at session start, an episode does not
    said, whole = _content_words(fact.content), _content_words(source)
    return bool(whole) and len(said & whole) >= RESTATES_SHARE * len(whole)


def extract(provider: BaseLLMProvider, content: str, cfg: ExtractionSettings) -> ExtractionResult:
    """Run the extraction prompt on `content` (raises ProviderError if the provider fails)."""
    truncated = len(content) > cfg.max_input_chars
    text = content[: cfg.max_input_chars]
    opts = GenerateOptions(timeout_s=cfg.timeout / 1000.0, json_mode=True, task=prompt.TASK)
    raw = provider.generate(prompt.build_prompt(text), opts)
    result = validate_output(raw, cfg)
    result.input_truncated = truncated
    if truncated:
        result.warnings.insert(0, f"input truncated from {len(content)} to {cfg.max_input_chars} chars")
    return result
