"""The pipeline end to end on a real Kenning service (real SQLite, bundled model), with the offline
provider and with a real local server speaking the Ollama / OpenAI protocols."""

from __future__ import annotations

import json

import pytest
from pipeline_helpers import Reply, extraction_json, ollama_llm, openai_llm, run_until

from kenning.core.types import MemoryDraft, MemoryFilter
from kenning.providers.offline import parse_task_block
from kenning.store import graph as gstore
from kenning.store import jobs
from kenning.store.factory import open_store


def drain(k, limit: int = 20) -> None:
    """Run the extraction worker in this thread until no extract job is ready."""
    worker = k.workers.get("extraction")
    for _ in range(limit):
        if not jobs.list_jobs(k.db, status="pending", job_type="extract"):
            return
        worker.run_once()


def count_memories(k) -> int:
    return k.db.reader().execute("SELECT COUNT(*) FROM memories").fetchone()[0]


def proposals(k, memory_id: str) -> list[dict]:
    return [h["changes"] for h in k.history(memory_id) if h["event"] == "pipeline_proposal"]


def echo_script(decision: dict | None = None, entities: list | None = None):
    """Extraction answers 'Noted: <input>' as one fact; decision answers `decision` (or ADD)."""

    def script(task: str, prompt: str):
        _, payload = parse_task_block(prompt)
        if task == "extraction":
            return extraction_json((f"Noted: {payload['content']}", "fact", 0.9), entities=entities)
        if task == "decision":
            return json.dumps(decision or {"action": "ADD", "confidence": 0.9, "reason": "new"})
        return "{}"

    return script


def test_raw_content_is_committed_before_any_llm_call(make_kenning, fake_llm):
    k = make_kenning(llm=ollama_llm(fake_llm))
    seen: list[int] = []
    observer = open_store(k.settings.store, k.settings.db_path)  # a second handle, like another process
    raw = "The payments API retries webhooks five times."

    def check_committed(task: str, prompt: str) -> None:
        row = observer.reader().execute("SELECT COUNT(*) FROM memories WHERE content = ?", (raw,)).fetchone()
        seen.append(row[0])

    fake_llm.on_request = check_committed
    fake_llm.script = lambda task, prompt: Reply(status=503)  # the LLM is down
    result = k.remember(MemoryDraft(content=raw, project="p"))
    k.workers.get("extraction").run_once()
    assert seen == [1]  # another connection saw the committed raw memory during the LLM call
    assert k.get(result.id).content == raw
    job = jobs.list_jobs(k.db, memory_id=result.id)[0]
    assert job.status == "pending" and "HTTP 503" in job.last_error
    observer.close()


def test_malformed_llm_json_yields_warnings_partial_results_nothing_lost(make_kenning, fake_llm):
    k = make_kenning(llm=openai_llm(fake_llm))
    fake_llm.script = lambda task, prompt: (
        '```json\n{"facts": [{"content": "The search cluster runs OpenSearch 2.11.", "type": "fact", '
        '"confidence": 0.9}, {"content": "The search clus'
    )
    raw = "Infra notes: search cluster runs OpenSearch 2.11, and the nightly reindex job is flaky."
    source = k.remember(MemoryDraft(content=raw, project="p"))
    drain(k)
    job = jobs.list_jobs(k.db, memory_id=source.id)[0]
    assert job.status == "completed"
    assert job.result["facts"] == 1 and job.result["outcomes"] == {"ADD:created": 1}
    assert any("salvaged" in w for w in job.result["warnings"])
    assert k.get(source.id).content == raw  # nothing lost
    created = k.get(job.result["created"][0])
    assert created.content == "The search cluster runs OpenSearch 2.11."
    assert created.source == "pipeline-v2:extracted-fact" and created.extraction_model == "openai:fake-chat"
    assert created.metadata["source_memory_id"] == source.id


def test_hallucinated_target_ids_are_dropped(make_kenning, fake_llm):
    k = make_kenning(llm=ollama_llm(fake_llm))
    fake_llm.script = echo_script({"action": "UPDATE", "targetId": "deadbeefdeadbeef", "confidence": 0.95,
                                   "reason": "newer information"})
    old = k.remember(MemoryDraft(content="The billing service uses MySQL.", project="p"))
    drain(k)
    new = k.remember(MemoryDraft(content="The billing service moved to PostgreSQL.", project="p"))
    drain(k)
    job = jobs.list_jobs(k.db, memory_id=new.id)[0]
    assert job.status == "completed" and job.result["proposals"] == 0
    assert any("hallucinated" in w for w in job.result["warnings"])
    assert k.get(old.id).superseded_by is None
    assert fake_llm.generations("decision")  # the LLM was asked, its answer was rejected


def test_shadow_mode_writes_nothing_to_memories(make_kenning):
    k = make_kenning(pipeline={"shadow_mode": True})
    k.remember(MemoryDraft(content="The billing service uses MySQL.", project="p"))
    source = k.remember(MemoryDraft(
        content="We switched the billing service from MySQL to PostgreSQL. Deploys run on Kubernetes.",
        project="p"))
    before = k.db.reader().execute("SELECT id, content, superseded_by, updated_at FROM memories").fetchall()
    drain(k)
    after = k.db.reader().execute("SELECT id, content, superseded_by, updated_at FROM memories").fetchall()
    assert [tuple(r) for r in after] == [tuple(r) for r in before]
    audit = proposals(k, source.id)
    assert {a["outcome"] for a in audit} == {"shadow"} and {a["action"] for a in audit} == {"UPDATE", "ADD"}
    assert all(a["mode"] == "shadow" and a["extraction_model"] == "offline:offline-rules-v1" for a in audit)


def test_supersession_keeps_both_memories_and_recall_returns_only_the_current_one(make_kenning):
    k = make_kenning()
    old = k.remember(MemoryDraft(content="The billing service uses MySQL.", project="p"))
    drain(k)
    new = k.remember(MemoryDraft(content="We switched the billing service from MySQL to PostgreSQL.",
                                 project="p"))
    drain(k)
    kept = k.get(old.id)
    assert kept.superseded_by == new.id and kept.valid_until and not kept.is_deleted
    assert kept.content == "The billing service uses MySQL."
    ids = [h.memory.id for h in k.recall("billing service database", filters=MemoryFilter(project="p"))]
    assert new.id in ids and old.id not in ids
    every = [h.memory.id for h in k.recall("billing service database",
                                           filters=MemoryFilter(project="p", include_superseded=True))]
    assert old.id in every
    assert any(h["event"] == "superseded" for h in k.history(old.id))
    assert proposals(k, new.id)[0]["outcome"] == "superseded"
    assert proposals(k, old.id) == []  # its only fact was itself: a no-op, not an audited proposal
    assert jobs.list_jobs(k.db, memory_id=old.id)[0].result["source_noops"] == 1


def test_decision_language_is_protected_at_remember_time(make_kenning):
    k = make_kenning()
    decided = k.remember(MemoryDraft(content="We decided to use Redis for the session cache.", project="p"))
    plain = k.remember(MemoryDraft(content="Redis runs on port 6379 in dev.", project="p"))
    assert (k.get(decided.id).type, k.get(decided.id).importance) == ("constraint", 0.85)
    assert (k.get(plain.id).type, k.get(plain.id).importance) == ("fact", 0.5)


def test_controlled_write_mode_blocks_update_and_gates_low_confidence(make_kenning):
    # the gate at 0.75: a decision the user states (0.75) passes, a plain stated fact (0.7) does not
    k = make_kenning(pipeline={"autonomous": {"allow_update_delete": False}, "extraction": {"min_confidence": 0.75}})
    old = k.remember(MemoryDraft(content="The billing service uses MySQL.", project="p"))
    drain(k)
    src = k.remember(MemoryDraft(content=(
        "We switched the billing service from MySQL to PostgreSQL. We decided to deploy the invoices API on "
        "Kubernetes. The invoices API is written in Go. Maybe the cache is Redis, not sure."), project="p"))
    drain(k)
    assert k.get(old.id).superseded_by is None
    audit = proposals(k, src.id)
    outcome = {(a["action"], a["outcome"], a["reason"]) for a in audit}
    assert ("UPDATE", "blocked", "update_delete_not_allowed") in outcome
    assert ("ADD", "created", "applied") in outcome
    assert ("ADD", "skipped", "low_fact_confidence") in outcome
    assert not any("Maybe" in (a.get("fact") or "") for a in audit)  # a hedge is no claim: never proposed


def test_token_budget_stops_llm_calls_and_jobs_wait(make_kenning, fake_llm):
    k = make_kenning(llm=ollama_llm(fake_llm, daily_token_budget=3000))
    fake_llm.script = lambda task, prompt: Reply(
        extraction_json(("The staging database is refreshed every Sunday.", "fact", 0.9)),
        prompt_tokens=5000, output_tokens=10)
    first = k.remember(MemoryDraft(content="The staging database is refreshed every Sunday.", project="p"))
    second = k.remember(MemoryDraft(content="The staging database lives in eu-west-1.", project="p"))
    worker = k.workers.get("extraction")
    worker.run_once()  # extraction call spends 5010 tokens; the decision call is refused ⇒ deferred
    worker.run_once()  # over budget: nothing is leased
    worker.run_once()
    assert len(fake_llm.generations()) == 1
    pending = {j.memory_id: j for j in jobs.list_jobs(k.db, status="pending")}
    assert set(pending) == {first.id, second.id} and pending[first.id].attempts == 0
    assert "budget exhausted" in pending[first.id].last_error
    status = k.pipeline_status()
    assert status["token_budget"]["exhausted"] and status["token_budget"]["used_today"] == 5010
    assert any("daily LLM token budget exhausted" in w for w in status["waiting"])
    assert status["workers"]["extraction"]["waiting"].startswith("daily LLM token budget exhausted")
    assert status["healthy"] is True and count_memories(k) == 2


def test_llm_job_that_always_fails_ends_dead(make_kenning, fake_llm):
    k = make_kenning(llm=openai_llm(fake_llm))
    fake_llm.script = lambda task, prompt: Reply(status=500)
    source = k.remember(MemoryDraft(content="Feature flags are stored in LaunchDarkly.", project="p"))
    worker = k.workers.get("extraction")
    worker.start()
    try:
        assert run_until(lambda: jobs.list_jobs(k.db, memory_id=source.id)[0].status == "dead")
    finally:
        worker.stop()
    job = jobs.list_jobs(k.db, memory_id=source.id)[0]
    assert job.attempts == 3 and "HTTP 500" in job.last_error
    assert len(fake_llm.generations("extraction")) == 3
    status = k.pipeline_status()
    assert status["dead_jobs"]["count"] == 1 and status["dead_jobs"]["recent"][0]["id"] == job.id
    assert k.get(source.id).content == "Feature flags are stored in LaunchDarkly."


@pytest.mark.parametrize("protocol", ["ollama", "openai"])
def test_remote_protocols_end_to_end_with_graph_triples(make_kenning, fake_llm, protocol):
    llm = ollama_llm(fake_llm) if protocol == "ollama" else openai_llm(fake_llm)
    k = make_kenning(llm=llm)
    fake_llm.script = echo_script(entities=[
        {"source": "checkout", "relationship": "uses", "target": "Stripe", "confidence": 0.9}])
    source = k.remember(MemoryDraft(content="Checkout talks to Stripe through the payments proxy.", project="p"))
    drain(k)
    job = jobs.list_jobs(k.db, memory_id=source.id)[0]
    assert job.status == "completed" and job.result["graph"]["relations"] == 1
    stripe = gstore.find_entity(k.db.reader(), "stripe")
    assert stripe is not None
    assert k.pipeline_status()["token_budget"]["used_today"] > 0


def test_pipeline_facts_go_through_the_one_write_path(make_kenning, fake_llm):
    """A fact the pipeline creates gets what every memory gets: the entity linker (it used to
    skip it) and the draft rules (decision auto-protection), inside the same write path."""
    k = make_kenning(llm=ollama_llm(fake_llm))
    fake_llm.script = echo_script()
    source = k.remember(MemoryDraft(content="We decided to use PostgreSQL instead of MySQL for the ledger.",
                                    project="p"))
    drain(k)
    job = jobs.list_jobs(k.db, memory_id=source.id)[0]
    assert job.status == "completed" and len(job.result["created"]) == 1
    fact = k.get(job.result["created"][0])
    assert fact.content.startswith("Noted: We decided to use PostgreSQL")
    conn = k.db.reader()
    postgres = gstore.find_entity(conn, "PostgreSQL")
    assert postgres is not None
    assert fact.id in {m["id"] for m in gstore.entity_memories(conn, postgres.id)}
    assert fact.type == "constraint" and fact.metadata.get("auto_protected") is True
