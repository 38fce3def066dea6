"""A session end's key facts are claims already judged in their conversation (sessions.overlay):
the pipeline does not extract them a second time (it wrote the same sentence again offline, and
paraphrased copies with an LLM). A memory remembered the ordinary way still gets its extract job."""

from __future__ import annotations

from kenning.core.events import SessionEnded, SessionStarted
from kenning.core.types import MemoryDraft, MemoryFilter
from kenning.pipeline.hooks import EXTRACT_JOB
from kenning.sessions.overlay import SOURCE as SUMMARY_SOURCE
from kenning.store import jobs

TRANSCRIPT = ("User: Please look at the billing deploy script.\n"
              "Assistant: Which tool should deploy billing, helm or plain kubectl?\n"
              "User: We decided to deploy billing with helm only. Never run kubectl apply by hand on the prod cluster.\n"
              "Assistant: Noted.\n")


def test_session_end_key_facts_are_not_extracted_again_by_the_pipeline(make_kenning):
    k = make_kenning()
    k.sessions.session_start(SessionStarted(session_key="s-facts", project="billing"))
    ended = k.sessions.session_end(SessionEnded(session_key="s-facts", transcript=TRANSCRIPT), wait=True)
    assert ended["summary"]["status"] == "done", ended
    learned = [m for m in k.list(MemoryFilter(session_key="s-facts"), limit=100)[0] if m.source == SUMMARY_SOURCE]
    assert {m.type for m in learned} == {"decision", "constraint"}, [(m.type, m.content) for m in learned]
    for memory in learned:
        assert jobs.list_jobs(k.db, job_type=EXTRACT_JOB, memory_id=memory.id) == [], memory.content
    # the control: what a user remembers is still extracted
    remembered = k.remember(MemoryDraft(content="The invoices API is written in Go and deployed by helm.", project="billing"))
    assert [j.job_type for j in jobs.list_jobs(k.db, memory_id=remembered.id)] == [EXTRACT_JOB]
