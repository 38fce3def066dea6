"""Semantic contradiction (LLM, behind its flag) and DELETE as non-destructive supersession."""

from __future__ import annotations

import json

from pipeline_helpers import extraction_json, ollama_llm

from kenning.core.types import MemoryDraft, MemoryFilter
from kenning.providers.offline import parse_task_block
from kenning.store import jobs


def script_for(action: str, contradicts: bool = True):
    """Extraction echoes the input as its one fact; decision targets the first candidate."""

    def script(task: str, prompt: str):
        _, payload = parse_task_block(prompt)
        if task == "extraction":
            return extraction_json((payload["content"], "fact", 0.9))
        if task == "decision":
            target = payload["candidates"][0]["id"]
            return json.dumps({"action": action, "targetId": target, "confidence": 0.9, "reason": "newer"})
        if task == "contradiction":
            return json.dumps({"contradicts": contradicts, "confidence": 0.8,
                               "reasoning": "PostgreSQL and MongoDB cannot both hold the invoices"})
        return "{}"

    return script


def process(k) -> None:
    worker = k.workers.get("extraction")
    while jobs.list_jobs(k.db, status="pending", job_type="extract"):
        worker.run_once()


def audit(k, memory_id):
    return [h["changes"] for h in k.history(memory_id) if h["event"] == "pipeline_proposal"]


def test_semantic_contradiction_flags_review_when_enabled(make_kenning, fake_llm):
    k = make_kenning(llm=ollama_llm(fake_llm), pipeline={"semantic_contradiction_enabled": True})
    fake_llm.script = script_for("UPDATE")
    old = k.remember(MemoryDraft(content="The billing service stores invoices in PostgreSQL.", project="p"))
    process(k)
    new = k.remember(MemoryDraft(content="The billing service moved invoices to MongoDB.", project="p"))
    process(k)
    record = audit(k, new.id)[0]
    assert record["action"] == "UPDATE" and record["outcome"] == "superseded"
    assert record["review_needed"] is True and record["contradiction"].startswith("semantic:")
    assert len(fake_llm.generations("contradiction")) == 1
    assert k.get(old.id).superseded_by == new.id


def test_semantic_check_is_off_by_default_and_delete_supersedes_with_the_source(make_kenning, fake_llm):
    k = make_kenning(llm=ollama_llm(fake_llm))
    fake_llm.script = script_for("DELETE")
    old = k.remember(MemoryDraft(content="Invoices are exported nightly to the S3 archive bucket.", project="p"))
    process(k)
    src = k.remember(MemoryDraft(content="The nightly invoice export to S3 was retired.", project="p"))
    process(k)
    assert fake_llm.generations("contradiction") == []
    kept = k.get(old.id)
    assert kept.superseded_by == src.id and kept.valid_until and not kept.is_deleted
    assert audit(k, src.id)[0]["outcome"] == "superseded"
    hits = [h.memory.id for h in k.recall("invoice export S3", filters=MemoryFilter(project="p"))]
    assert old.id not in hits
