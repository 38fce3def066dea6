"""The offline pipeline extracts durable claims, not copies of conversation (issue 22).

Real sentences: the LoCoMo turns below are conv-26's (../shared/bench/locomo), stored as the
bench stores them ("Speaker: text"). Before, 355 of the 382 memories the pipeline extracted from
that conversation were chatter kept as `stated-fact` ("Caroline: Sounds fun!") and took top-10
slots from the raw turns.
"""

from __future__ import annotations

import pytest

from kenning.core import claims
from kenning.core.types import MemoryDraft
from kenning.pipeline.extraction import Fact, restates_source
from kenning.pipeline.writes import SOURCE_TAG
from kenning.providers.offline_rules import extract
from kenning.store import jobs

CHATTER_TURNS = [
    "Caroline: Sounds fun!",
    "Melanie: Wow, looks awesome!",
    "Melanie: Pets sure do bring so much joy to us! They are the best.",
    "Caroline: Hey Mel! Good to see you! How have you been?",
    "Melanie: Thanks, Caroline. The kids are at camp this week.",
    "Melanie: You must be so proud of her.",
    "Caroline: Keep it up! Can't wait to see your pottery project.",
    "Melanie: Check out this pic of him eating parsley!",
    "Melanie: Family is everything.",  # a plain statement: the raw turn holds it
    "Caroline: Taking care of ourselves is so important - even if it's not always easy.",
    "Melanie: We played games, ate good food, and just hung out together.",
]


@pytest.mark.parametrize("turn", CHATTER_TURNS)
def test_a_conversation_turn_without_a_claim_gives_no_fact(turn):
    assert extract({"content": turn})["facts"] == []


def test_a_claim_inside_a_conversation_turn_is_still_extracted():
    facts = extract({"content": "User: Thanks, that works. From now on never commit .env files."})["facts"]
    assert [(f["content"], f["type"]) for f in facts] == [("From now on never commit .env files.", "decision")]
    decided = extract({"content": "Caroline: I chose them 'cause they help LGBTQ+ folks with adoption."})["facts"]
    assert [f["type"] for f in decided] == ["decision"]  # conv-26's one decision survives the speaker label


@pytest.mark.parametrize("sentence, reason", [
    ("Pets sure do bring so much joy to us!", "exclamation"),
    ("Congrats on the new job.", "small-talk"),
    ("The colors really blend nicely, such a cool piece.", "small-talk"),
    ("The parade in the old town is this weekend.", "episode"),
    ("Can't wait to hear about the trip.", "small-talk"),
])
def test_chatter_is_never_a_plain_fact(sentence, reason):
    verdict = claims.judge(sentence, claims.Context(allow_fact=True))
    assert not verdict.kept and verdict.reason == reason


def test_a_note_label_is_not_a_speaker_and_documentation_keeps_its_facts():
    facts = extract({"content": "Note: the invoices API is written in Go. It runs on Kubernetes."})["facts"]
    assert [f["content"] for f in facts] == ["Note: the invoices API is written in Go."]
    assert facts[0]["evidence"]["rule"] == "stated-fact"


def test_a_plain_fact_that_restates_its_source_is_a_copy():
    source = "Gotcha: Stripe sends duplicate webhook events; dedupe on event.id in the webhook_events table"
    (fact,) = extract({"content": source})["facts"]
    assert restates_source(Fact(fact["content"], fact["type"], evidence=fact["evidence"]), source)
    assert not restates_source(Fact(fact["content"], fact["type"]), source)  # an LLM's fact: not second-guessed
    two = "We switched the billing service from MySQL to PostgreSQL. Deploys run on Kubernetes."
    restated = {f["content"]: restates_source(Fact(f["content"], f["type"], evidence=f["evidence"]), two) for f in extract({"content": two})["facts"]}
    assert restated == {"We switched the billing service from MySQL to PostgreSQL.": True,  # an UPDATE still supersedes
                        "Deploys run on Kubernetes.": False}
    (rule,) = extract({"content": "Never commit .env files."})["facts"]
    assert not restates_source(Fact(rule["content"], rule["type"], evidence=rule["evidence"]), "Never commit .env files.")


def _drain(k, limit: int = 40) -> None:
    worker = k.workers.get("extraction")
    for _ in range(limit):
        if not jobs.list_jobs(k.db, status="pending", job_type="extract"):
            return
        worker.run_once()


def test_the_pipeline_adds_no_copy_of_chatter_or_of_a_one_sentence_memory(make_kenning):
    k = make_kenning()
    for turn in CHATTER_TURNS:
        k.remember(MemoryDraft(content=turn, type="episodic", project="locomo"))
    k.remember(MemoryDraft(content="The invoices API is written in Go.", project="docs"))
    rule = k.remember(MemoryDraft(content="User: Thanks, that works. From now on never commit .env files.",
                                  type="episodic", project="docs"))
    _drain(k)
    rows = k.db.reader().execute("SELECT content, type, source FROM memories ORDER BY created_at").fetchall()
    assert [r[0] for r in rows if r[2] == SOURCE_TAG] == ["From now on never commit .env files."]
    assert len(rows) == len(CHATTER_TURNS) + 3
    assert any(h["event"] == "pipeline_proposal" for h in k.history(rule.id))
