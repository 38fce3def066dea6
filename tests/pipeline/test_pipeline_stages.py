"""Extraction and decision validation, contradiction checks and decision auto-protection."""

from __future__ import annotations

import json

from kenning.core.config_pipeline import ExtractionSettings, PipelineSettings
from kenning.core.types import MemoryDraft
from kenning.pipeline.contradiction import check, syntactic_contradiction
from kenning.pipeline.decision import Candidate, decide, validate_decision
from kenning.pipeline.extraction import Fact, validate_output
from kenning.pipeline.parsing import parse_json_output
from kenning.pipeline.protection import protect_draft
from kenning.providers.offline import OfflineProvider

CFG = ExtractionSettings()


def test_caps_and_per_item_validation():
    facts = [{"content": f"Service number {i} listens on port {8000 + i}.", "type": "fact", "confidence": 0.9}
             for i in range(25)]
    facts[0] = {"content": "too short", "type": "fact", "confidence": 0.9}
    facts[1] = {"content": "x" * 2500, "type": "fact", "confidence": 0.9}
    facts[2] = {"content": "The deploy runs on Fridays only.", "type": "rumour", "confidence": 1.7}
    entities = [{"source": "a", "relationship": "uses", "target": f"t{i}"} for i in range(55)]
    entities[0] = {"source": "", "relationship": "uses", "target": "x"}
    result = validate_output(json.dumps({"facts": facts, "entities": entities}), CFG)
    assert len(result.facts) == 19  # 20 kept by the cap, one of them too short
    assert len(result.facts[0].content) == 2000
    assert result.facts[1].type == "fact" and result.facts[1].confidence == 1.0
    assert len(result.entities) == 49
    text = " | ".join(result.warnings)
    for expected in ("kept the first 20", "kept the first 50", "shorter than 10", "truncated from 2500",
                     "unknown type 'rumour' coerced", "clamped", "needs non-empty source"):
        assert expected in text


def test_malformed_json_gives_partial_results_and_warnings():
    raw = ('Sure! Here you go:\n```json\n{"facts": [{"content": "Redis caches user sessions.", "type": "fact",'
           ' "confidence": 0.9}, {"content": "The queue is Rab')
    result = validate_output(raw, CFG)
    assert [f.content for f in result.facts] == ["Redis caches user sessions."]
    assert any("salvaged" in w for w in result.warnings)
    nothing = validate_output("I could not find any facts, sorry.", CFG)
    assert nothing.facts == [] and any("not valid JSON" in w for w in nothing.warnings)


def test_parse_json_output_strips_think_and_chatter():
    value, warnings = parse_json_output('<think>{"x": 0}</think>Answer: {"action": "ADD"} done')
    assert value == {"action": "ADD"} and warnings


FACT = Fact("Billing switched from MySQL to PostgreSQL.", "fact", 0.9)
CANDS = [Candidate("m1", "Billing uses MySQL.", "fact", 0.5), Candidate("m2", "Ops use Grafana.", "fact", 0.2)]


def test_hallucinated_missing_and_unreasoned_decisions_are_dropped():
    warnings: list[str] = []
    bad = [
        {"action": "UPDATE", "targetId": "m999", "confidence": 0.9, "reason": "newer"},
        {"action": "DELETE", "confidence": 0.9, "reason": "gone"},
        {"action": "ADD", "confidence": 0.9, "reason": "  "},
        {"action": "MERGE", "confidence": 0.9, "reason": "?"},
        "not json at all",
    ]
    for answer in bad:
        raw = answer if isinstance(answer, str) else json.dumps(answer)
        assert validate_decision(raw, FACT, CANDS, warnings) is None
    text = " | ".join(warnings)
    assert "hallucinated" in text and "without targetId" in text and "empty reason" in text
    good = validate_decision('{"action": "UPDATE", "targetId": "m1", "confidence": 0.8, "reason": "newer"}',
                             FACT, CANDS, warnings)
    assert good.action == "UPDATE" and good.target_id == "m1" and good.target_content == "Billing uses MySQL."


class CountingProvider(OfflineProvider):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def complete(self, prompt, opts):
        self.calls += 1
        return super().complete(prompt, opts)


def test_no_candidates_means_add_without_an_llm_call():
    provider = CountingProvider()
    proposal = decide(provider, FACT, [], [])
    assert proposal.action == "ADD" and proposal.confidence == 0.9 and provider.calls == 0
    assert decide(provider, FACT, CANDS, []).action == "UPDATE" and provider.calls == 1


def test_syntactic_contradiction_needs_overlap_and_polarity_or_antonyms():
    assert syntactic_contradiction("Telemetry is enabled in prod builds", "Telemetry is disabled in prod builds")
    assert syntactic_contradiction("The cache is not shared across workers", "The cache is shared across workers")
    assert syntactic_contradiction("The cache is not shared", "Deploys happen on Friday") is None
    # semantic check only when enabled, only for UPDATE with >= 3 shared tokens
    a, b = "Billing service stores invoices in PostgreSQL", "Billing service moved invoices to MongoDB"
    assert check(OfflineProvider(), "UPDATE", a, b, semantic_enabled=False, timeout_s=5) is None


def test_decision_auto_protection_at_write_time():
    protected = protect_draft(MemoryDraft(content="We decided to use Redis for the session cache."))
    assert protected.type == "constraint" and protected.importance == 0.85
    gotcha = protect_draft(MemoryDraft(content="We went with uv over pip.", type="gotcha", importance=0.9))
    assert gotcha.type == "gotcha" and gotcha.importance == 0.9
    plain = MemoryDraft(content="The API listens on port 8080.")
    assert protect_draft(plain) is plain


def test_pipeline_settings_defaults_and_ranges():
    s = PipelineSettings()
    assert (s.extraction.min_confidence, s.worker.poll_ms, s.worker.max_retries, s.worker.lease_timeout_ms) == (
        0.7, 2000, 3, 300_000)
    assert (s.graph.enabled, s.documents.chunk_size, s.hints.enabled) == (True, 2000, False)
    assert s.mode == "full"
    assert PipelineSettings.model_validate({"shadowMode": True}).mode == "shadow"
    assert PipelineSettings(mutations_frozen=True).mode == "shadow"
    assert PipelineSettings.model_validate({"autonomous": {"allowUpdateDelete": False}}).mode == "controlled-write"
    for bad in ({"worker": {"max_retries": 11}}, {"extraction": {"min_confidence": 1.5}},
                {"documents": {"chunk_size": 300, "chunk_overlap": 300}}, {"unknown_flag": True}):
        try:
            PipelineSettings.model_validate(bad)
        except ValueError:
            continue
        raise AssertionError(f"accepted invalid settings {bad}")
