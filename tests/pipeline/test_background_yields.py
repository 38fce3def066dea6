"""Background work yields to the agent and skips what is already known (issue 36).

- An imported memory (stored in a bulk write) that is already one distilled claim needs no
  extraction beyond the claim test: no fact is embedded or decided; the same sentence remembered
  on its own still goes through the decision stage (it may supersede an older memory).
- A near-duplicate of an older memory whose extraction ran is extracted once, as that memory.
- A lease worker does not start a job while one of the agent's requests is in flight.
"""

from __future__ import annotations

import threading
import time

from kenning.core.activity import BULK_BATCH, HOLD_S, foreground_ended, foreground_started, in_bulk_write
from kenning.core.types import MemoryDraft
from kenning.store import jobs
from kenning.workers.base import LeaseWorker

CLAIM = "The billing worker must be restarted after a Postgres migration."


def extract_job(db, memory_id: str):
    found = [j for j in jobs.list_jobs(db, job_type="extract", memory_id=memory_id)]
    assert len(found) == 1, found
    return found[0]


def drain(service) -> None:
    worker = service.workers.get("extraction")
    while jobs.list_jobs(service.db, status="pending", job_type="extract", limit=1):
        worker.run_once()


def test_an_imported_distilled_claim_skips_the_decision_stage_a_single_remember_does_not(make_kenning):
    service = make_kenning()
    filler = [MemoryDraft(content=f"Import filler note number {i} about the websocket hub and {i * 7} retries.",
                          project="imp") for i in range(BULK_BATCH - 1)]
    imported = service.remember_many([MemoryDraft(content=CLAIM, project="imp"), *filler])
    assert not in_bulk_write()  # the mark lives only while the batch is stored
    single = service.remember(MemoryDraft(content=CLAIM, project="alone"))
    time.sleep(HOLD_S)  # the bulk write's hold on the workers passes
    drain(service)

    job = extract_job(service.db, imported[0].id)
    assert job.payload == {"imported": True} and job.status == "completed"
    assert job.result["skipped"] == "already a distilled claim" and job.result["facts"] == 1
    alone = extract_job(service.db, single.id)
    assert alone.payload == {} and "skipped" not in alone.result  # decided like before
    assert alone.result["facts"] == 1
    stats = service.workers.get("extraction").stats()
    assert stats["skipped"]["already a distilled claim"] >= 1


def test_a_near_duplicate_is_extracted_once(make_kenning):
    service = make_kenning()
    first = service.remember(MemoryDraft(content="Deploys of the payment service need the VPN and a fresh token, "
                                                 "then run make ship from the release branch.", project="dup"))
    drain(service)
    twin = service.remember(MemoryDraft(content="Deploys of the payment service need the VPN and a fresh token; "
                                                "then run make ship from the release branch [2].", project="dup"))
    assert twin.id != first.id  # not the same content: stored apart
    other = service.remember(MemoryDraft(content="The payment service deploys with make ship.", project="other"))
    drain(service)
    assert "skipped" not in extract_job(service.db, first.id).result
    assert extract_job(service.db, twin.id).result["skipped"] == f"near-duplicate ({first.id})"
    assert "skipped" not in extract_job(service.db, other.id).result  # another project: not a twin


def test_an_imported_claim_is_judged_before_the_near_duplicate_check_a_twin_rule_is_not(make_kenning):
    """With a free extraction (offline rules) an imported memory's claim test comes first: a one-claim
    twin of an earlier memory of the same import is skipped as a distilled claim (no KNN over the
    store); a twin that is a rule is not a restatement, so the near-duplicate check still catches it."""
    service = make_kenning()
    fact, fact_twin = CLAIM, CLAIM.replace("migration.", "migration [2].")  # cosine 0.98: twins
    rule = "Never deploy the billing worker on a Friday afternoon. The on-call rota is thin at the end of the week."
    rule_twin = rule.replace("week.", "week [2].")  # cosine 0.98; two facts, neither restates the whole
    filler = [MemoryDraft(content=f"Import filler note number {i} about the websocket hub and {i * 7} retries.",
                          project="twins") for i in range(BULK_BATCH)]
    stored = service.remember_many([MemoryDraft(content=t, project="twins") for t in (fact, rule, fact_twin, rule_twin)]
                                   + filler)
    time.sleep(HOLD_S)
    drain(service)
    results = [extract_job(service.db, m.id).result for m in stored[:4]]
    assert results[0]["skipped"] == "already a distilled claim"
    assert "skipped" not in results[1]  # two facts, a rule among them: decided
    assert results[2]["skipped"] == "already a distilled claim"  # judged before the KNN
    assert results[3]["skipped"] == f"near-duplicate ({stored[1].id})"


class Recorder(LeaseWorker):
    job_types = ("yield-test",)

    def handle(self, job):
        return {"done": job.id}


def test_a_lease_worker_waits_while_an_agent_request_is_in_flight(kenning):
    time.sleep(HOLD_S)
    worker = Recorder("recorder", kenning.db, poll_s=0.05)
    job_id, _ = jobs.enqueue(kenning.db, "yield-test", dedup_key="k")
    foreground_started()
    try:
        ran = threading.Thread(target=worker.run_once)
        ran.start()
        time.sleep(0.3)  # well inside the worker's longest wait (FOREGROUND_MAX_WAIT_S)
        assert jobs.get_job(kenning.db, job_id).status == "pending"
    finally:
        foreground_ended()
    ran.join(10)
    assert jobs.get_job(kenning.db, job_id).status == "completed"
    assert worker.stats()["yielded_s"] > 0
