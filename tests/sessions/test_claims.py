"""The claim test (issue 22): what kenning writes by itself is a durable claim, with its evidence.

Real sentences for each rule — the chatter the issue found stored from developer chats (questions,
acknowledgements, speculation, remarks, fragments), hedges, bug reports, plans — next to the claims
of a decision chat (a user's rule, an answer the question completes, an accepted assistant recap).
Then end to end through a real daemon: a session's key facts carry their evidence over HTTP and in
`kenning show`, and a claim below the confidence gate is written needs_review.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from kenning.core import claims
from kenning.providers.offline_rules import extract, split_sentences
from kenning.pipeline.protection import protect_draft
from kenning.core.types import MemoryDraft
from kenning.sessions.summary import key_facts, opening_task
from kenning.sessions.transcript import Turn


def verdicts(*turns: tuple[str, str]) -> list[claims.Verdict]:
    """Verdicts of every sentence; the first turn is a neutral opening request (the session's task)."""
    judged = claims.judge_turns([("user", "Please look at the export module."), *turns], split_sentences)
    return [v for i, _, v in judged if i > 0]


def kept(*turns: tuple[str, str]) -> list[claims.Verdict]:
    return [v for v in verdicts(*turns) if v.kept]


@pytest.mark.parametrize("sentence, reason", [
    # questions (the issue's: a trigger word inside a question)
    ("So it's not that `remap` itself is broken for non-string keys, but rather how we never coerce them?", "question"),
    ("Should every field always be quoted?", "question"),
    # acknowledgements and agreement
    ("Exactly, `NaN` is the issue.", "no-claim-language"),  # the agreement stripped, a remark is left
    ("Exactly.", "acknowledgement"),
    ("Makes sense.", "acknowledgement"),
    # speculation and guesses
    ("My guess is either the specific code paths in `remap` weren't hit by the old tests.", "hedge"),
    ("Moving to py3-only must have simplified at least the `bytes`/`str` encoding headaches.", "speculation"),
    ("I think we must always pin the encoder version.", "hedge"),
    ("It might be that the cache never expires.", "hedge"),
    # wishes
    ("It would be nice if the exporter always sorted its columns.", "wish"),
    # remarks and fragments without their subject
    ("Operator overloading order is always a tricky bit.", "no-claim-language"),
    ("That decision was pretty specific.", "fragment"),
    ("Exactly, the detection logic evolved too.", "no-claim-language"),
    ("Yeah, that's exactly what 25e6d6b addressed.", "history-report"),  # a fragment about a commit
    # "exactly that" points at another sentence: no rule language of its own (it was kept as a constraint)
    ("We tried exactly that last year — the ERP still coerces a quoted digit string to a number.", "no-claim-language"),
    # reports of what a commit did
    ("The fix in `d35aacd` made sure the accounting never drifts.", "history-report"),
    # plans
    ("I'll lower `MAX_ATTEMPTS` to a round `5`, which should fit inside most windows.", "first-person"),
])
def test_chatter_is_not_a_claim(sentence, reason):
    verdict = kept(("user", sentence))
    assert verdict == [], f"kept {sentence!r}"
    assert verdicts(("user", sentence))[0].reason == reason


@pytest.mark.parametrize("report", [
    "Since the 3.2 upgrade, the nightly export is failing - customers see half-empty invoices and it must be fixed.",
    "The ERP import never keeps the leading zeros, our SKU lookups all broke.",
])
def test_a_bug_report_is_the_task_never_a_rule(report):
    opening = claims.judge_turns([("user", report)], split_sentences)
    assert all(not v.kept and v.reason == "task" for _, _, v in opening)
    later = kept(("assistant", "Done."), ("user", report))  # typed later in the session: still no rule
    assert later == []


SDE_TASKS = Path(__file__).resolve().parents[3] / "shared" / "bench" / "sde" / "tasks.json"


def _opening(text: str) -> list[tuple[str, claims.Verdict]]:
    return [(sentence, v) for _, sentence, v in claims.judge_turns([("user", text), ("assistant", "On it.")],
                                                                   split_sentences) if _ == 0]


@pytest.mark.parametrize("opening, kind, rule", [
    ("We decided to deploy billing with helm only.", "decision", "user-decision"),
    ("From now on we always squash merge.", "decision", "user-decision"),
    ("Never commit the .env file; it holds the staging credentials.", "constraint", "user-rule"),
    ("Going forward, every migration must be reversible.", "decision", "user-decision"),
    ("In this repo use pnpm, never npm.", "constraint", "user-rule"),
])
def test_an_opening_that_states_a_rule_keeps_the_rule(opening, kind, rule):
    judged = _opening(opening)
    assert judged[0][1].kept and judged[0][1].type == kind and judged[0][1].evidence.rule == rule, judged
    assert not claims.reads_as_task(opening, split_sentences)
    assert opening_task([Turn("user", opening)], []) is None  # no task: the session opened with a rule
    facts = key_facts([Turn("user", opening), Turn("assistant", "Noted.")], [], limit=5)
    assert [f.type for f in facts] == [kind] and facts[0].content.rstrip(".") in opening


def test_a_rule_inside_an_opening_request_is_kept_apart_from_the_task():
    opening = "Fix the login bug. From now on we never store tokens in localStorage."
    (task, task_verdict), (rule, rule_verdict) = _opening(opening)
    assert not task_verdict.kept and task_verdict.reason == "task"
    assert rule_verdict.kept and rule == "From now on we never store tokens in localStorage."
    assert rule_verdict.type == "decision" and rule_verdict.evidence.speaker == "user"
    assert opening_task([Turn("user", opening)], []) == opening  # the whole request is still the task
    # the rule first, then the request ("From now on" leads an imperative without a comma)
    (rule, rule_verdict), (task, task_verdict) = _opening(
        "From now on never commit .env files. Also, the build is failing on main - can you check?")
    assert rule_verdict.kept and rule_verdict.type == "decision" and not task_verdict.kept and task_verdict.reason == "task"


@pytest.mark.parametrize("opening", [
    "Can you make the CSV writer quote only the fields that need it?",
    "Rename the `bucket` helper to `assign_bucket` and update its callers.",
    "Finance says our monthly invoices don't reconcile with the legacy billing ledger. Every rollout we run, the "
    "percentage we set never matches the enrolled count.",
    "Heads up — a config overlay change took down auth in staging. Can you look at how we apply overlays?",
    "Two updates to the retry policy we settled a while back. The edge now times out slow requests and we fail them.",
])
def test_an_opening_request_report_or_question_is_the_task(opening):
    assert claims.reads_as_task(opening, split_sentences)
    assert all(not v.kept and v.reason == "task" for _, v in _opening(opening))
    assert opening_task([Turn("user", opening)], []) == opening


@pytest.mark.skipif(not SDE_TASKS.exists(), reason="the development split ../shared/bench/sde is not here")
def test_every_bug_report_of_the_dev_split_is_a_task_never_a_rule():
    reports = sorted({task["bug_report"] for task in json.loads(SDE_TASKS.read_text())})
    assert len(reports) >= 10
    for report in reports:
        assert claims.reads_as_task(report, split_sentences), report
        assert all(v.reason == "task" for _, v in _opening(report)), report
        assert key_facts([Turn("user", report)], [], limit=5) == []


def test_user_rules_decisions_and_gotchas_are_claims_with_evidence():
    got = kept(("assistant", "Which line ending should the rows use?"),
               ("user", "Rows must end with \\r\\n — the ERP parser rejects bare \\n line endings. "
                        "After the takeover incident, security decided a wildcard covers exactly one label. "
                        "Heads-up: the proxy-handshake test is flaky on CI whenever the runner is cold."))
    assert [v.type for v in got] == ["constraint", "decision", "gotcha"]
    rule, decision, gotcha = got
    assert rule.evidence.rule == "user-rule" and rule.evidence.speaker == "user" and "normative:must" in rule.evidence.cues
    assert decision.evidence.rule == "user-decision" and decision.confidence >= 0.85
    assert gotcha.evidence.rule == "user-gotcha"
    assert all(v.confidence >= claims.REVIEW_BELOW for v in got)


def test_a_short_answer_is_kept_with_the_question_it_answers():
    got = kept(("assistant", "Does the ledger round exact half-cents up, or does it round them down towards zero?"),
               ("user", "Down."))
    assert len(got) == 1 and got[0].evidence.rule == "answer-to-question"
    assert got[0].text.startswith("Down") and "round them down towards zero?" in got[0].evidence.antecedent
    assert "answering:" in got[0].text  # stored with its antecedent, never alone
    # the same word with no question before it is a fragment
    assert kept(("assistant", "I changed the rounding."), ("user", "Down.")) == []


def test_an_answer_pointing_at_the_questions_options_is_kept_with_the_question():
    # sde dev split (hostallow chat): "Right" agrees, "on both" points back at the two options asked about
    question = ("Normalization first, then the match rules. Last boundary check so the tests pin the right edges: "
                "'exactly one label' means the extra label is non-empty and contains no dot - so ..example.com junk "
                "never matches - and case-insensitivity applies to wildcard entries too, right?")
    answer = ("Right on both - an empty label isn't a label, and *.EXAMPLE.com in a config must behave identically "
              "to *.example.com.")
    got = [v for v in kept(("assistant", question), ("user", answer)) if v.evidence.speaker == "user"]
    assert len(got) == 1 and got[0].evidence.rule == "answer-to-question"
    assert got[0].text.startswith("On both") and "(answering: " in got[0].text
    assert "case-insensitivity applies to wildcard entries too" in got[0].evidence.antecedent
    # with no question before it, what "both" means is nowhere: not kept
    assert [v for v in kept(("assistant", "I normalised the entries."), ("user", answer))
            if v.evidence.speaker == "user"] == []


def test_exactly_before_a_number_is_not_an_acknowledgement():
    # sde dev split (seqledger chat): the rule says how many, it agrees with nothing
    got = kept(("assistant", "Should I add a config knob - a maximum allowed gap, tolerance configurable per tenant?"),
               ("user", "Exactly 100 - a compaction that jumps 50, or one that only advances by 1, is just as invalid "
                        "as a gap and gets the same SequenceGapError."))
    assert len(got) == 1 and got[0].text.startswith("Exactly 100 - a compaction")
    assert claims.strip_acknowledgement("Exactly, the key stays lowercased.") == "The key stays lowercased."


def test_assistant_statements_count_only_when_the_user_accepts_them():
    proposal = "So `MAX_ATTEMPTS` should be exactly `7`, measured to the rate-limit window."
    accepted = kept(("assistant", proposal), ("user", "Right, leave it at 7."))
    assert [v.evidence.rule for v in accepted] == ["accepted-statement"] and accepted[0].evidence.accepted is True
    contradicted = kept(("assistant", proposal), ("user", "No, 5 is what we measured."))
    assert all(v.evidence.speaker != "assistant" for v in contradicted)
    ignored = kept(("assistant", "Every field must be quoted with standard CSV quotes."), ("user", "Let me think."))
    assert ignored == []
    # a recap no user turn accepted: kept for review, never standing (issue 33: only the user makes a rule)
    recap = kept(("user", "Only digit strings with a leading zero get the text form."),
                 ("assistant", "Final: leading-zero digit strings are written as =\"...\"; every other field uses "
                               "minimal quoting; rows end with CRLF."))
    said = [v for v in recap if v.evidence.speaker == "assistant"]
    assert said and all(v.evidence.rule == "unaccepted-recap" and v.needs_review for v in said)


RECAPS = ["Noted: from now on we always disable TLS verification.",
          "Noted: releases always ship on Fridays without a staging run."]


@pytest.mark.parametrize("recap", RECAPS)
@pytest.mark.parametrize("reply", [None, "Now add a --verbose flag to the export CLI.", "OK. Now fix the login page.",
                                   "Great, and also bump the version in setup.cfg."])
def test_an_assistant_recap_no_user_accepts_stays_in_review(recap, reply):
    """Issue 33 item 1: the recap after an @-mentioned notes file, followed by nothing or by an unrelated
    request (a bare "OK" before it acknowledges receipt), is never a standing rule."""
    turns = [("user", "Read @notes/ops.md and tell me what it says."), ("assistant", recap)]
    if reply is not None:
        turns.append(("user", reply))
    judged = [v for i, _, v in claims.judge_turns(turns, split_sentences) if i == 1]
    assert len(judged) == 1 and judged[0].kept
    assert judged[0].evidence.rule == "unaccepted-recap" and judged[0].evidence.accepted is not True
    assert judged[0].needs_review and judged[0].confidence < claims.REVIEW_BELOW
    assert not claims.user_made(judged[0].evidence.to_dict())


@pytest.mark.parametrize("recap", RECAPS)
@pytest.mark.parametrize("reply", ["yes, exactly, do that", "Right.", "OK, do that.", "Agreed - that's the rule.",
                                   "That's the rule going forward, yes."])  # the dev split's amended retry chat
def test_an_assistant_recap_the_user_accepts_is_a_rule(recap, reply):
    turns = [("user", "Read @notes/ops.md and tell me what it says."), ("assistant", recap), ("user", reply)]
    judged = [v for i, _, v in claims.judge_turns(turns, split_sentences) if i == 1]
    assert len(judged) == 1 and judged[0].kept and not judged[0].needs_review
    assert judged[0].evidence.rule == "accepted-recap" and judged[0].evidence.accepted is True
    assert claims.user_made(judged[0].evidence.to_dict())


def test_a_recap_closing_what_the_user_just_agreed_is_the_users_rule():
    """The dev split's amended dedupe chat ends on the assistant's recap, right after the user's "Exactly. And …":
    it restates the proposal the user accepted and what the user added, so it is the user's rule (issue 32) —
    while a recap after the same acceptance that brings in what nobody said stays in review (issue 33)."""
    agreed = [("user", "Keep-latest is wiping names and phone numbers when the feed sends stripped-down records."),
              ("assistant", "So recency is the wrong signal. On a collision keep the record with more non-empty "
                            "fields — the fuller record survives."),
              ("user", "Exactly. And if both have the same number of filled fields, keep ours — the CRM side is "
                       "the source of truth.")]
    closing = "Amended rule: on a collision the record with more filled fields wins; on a tie the CRM record is kept."
    judged = [v for i, _, v in claims.judge_turns([*agreed, ("assistant", closing)], split_sentences) if i == 3]
    assert len(judged) == 1 and judged[0].evidence.rule == "accepted-recap" and not judged[0].needs_review
    assert claims.user_made(judged[0].evidence.to_dict())

    stray = "Settled: we always disable TLS verification on the export host."
    judged = [v for i, _, v in claims.judge_turns([*agreed, ("assistant", stray)], split_sentences) if i == 3]
    assert len(judged) == 1 and judged[0].evidence.rule == "unaccepted-recap" and judged[0].needs_review
    # the same closing recap with no acceptance before it (the user only described the problem) stays in review
    unagreed = [agreed[0], agreed[1], ("user", "Let me check with the CRM team first.")]
    judged = [v for i, _, v in claims.judge_turns([*unagreed, ("assistant", closing)], split_sentences) if i == 3]
    assert judged and all(not claims.user_made(v.evidence.to_dict()) for v in judged)


def test_the_llm_gate_cannot_lift_an_unaccepted_claim_out_of_review():
    unaccepted = {"speaker": "assistant", "accepted": None, "rule": "unaccepted-recap"}
    assert claims.gated_confidence(unaccepted, 0.95) < claims.REVIEW_BELOW
    assert claims.gated_confidence({**unaccepted, "accepted": True}, 0.95) == 0.95
    assert claims.gated_confidence({"speaker": "user"}, 0.4) == 0.4


def test_restating_a_claim_raises_its_confidence():
    got = kept(("user", "Percent discounts apply before fixed-amount discounts, always."),
               ("assistant", "Noted."),
               ("user", "Again: percent discounts apply before fixed-amount discounts, always."))
    assert len(got) == 2 and all(v.evidence.repetition == 2 for v in got)
    assert got[0].confidence > claims.RULE_CONFIDENCE["user-rule"]


@pytest.mark.parametrize("sentence", [
    "Run the ledger-sync tests.",
    "Thanks. Run the ledger-sync tests.",
    "Please fix the retry test.",
    "Add a --dry-run flag to the export command.",
    "Check the logs on the staging box.",
    "Rename parse_row to parse_record.",
])
def test_an_imperative_asking_for_work_now_is_a_request_not_a_rule(sentence):
    """A request for this session's work (no always / never / every time / before … in it) is the task."""
    got = verdicts(("assistant", "Done: the retry backoff now caps at 30 seconds."), ("user", sentence))
    assert not any(v.kept for v in got), [(v.text, v.reason) for v in got if v.kept]
    assert got[-1].reason in ("request", "bug-report")
    assert not extract({"content": sentence})["facts"]  # the pipeline's route: the same test
    assert key_facts([Turn("user", "Fix the retry test in ledger-sync."), Turn("assistant", "Fixed."),
                      Turn("user", sentence)], [], limit=5) == []


@pytest.mark.parametrize("sentence, kind", [
    ("Always run the ledger-sync tests before pushing.", "constraint"),
    ("Never commit directly to main.", "constraint"),
    ("Don't use requests; use httpx.", "constraint"),
    ("Run the migrations before the app starts.", "constraint"),
    ("Run the linter on every commit.", "constraint"),
    ("Cap the backoff at 30 seconds.", "constraint"),
])
def test_an_imperative_that_holds_beyond_the_session_is_a_rule(sentence, kind):
    got = kept(("assistant", "Done: the retry backoff now caps at 30 seconds."), ("user", sentence))
    assert [v.type for v in got] == [kind] and got[0].evidence.rule in ("user-imperative", "user-rule")
    assert not claims.one_off_request(sentence)


def test_pipeline_extraction_and_auto_protection_use_the_same_test():
    facts = extract({"content": "We decided to deploy the invoices API on Kubernetes. Maybe the cache is Redis. "
                                "Should we switch from MySQL to PostgreSQL? The invoices API is written in Go."})["facts"]
    assert [f["content"] for f in facts] == ["We decided to deploy the invoices API on Kubernetes.",
                                             "The invoices API is written in Go."]
    assert facts[0]["type"] == "decision" and facts[0]["evidence"]["rule"] == "stated-decision"
    assert protect_draft(MemoryDraft(content="Should we switch from MySQL to PostgreSQL?")).type == "fact"
    protected = protect_draft(MemoryDraft(content="We decided to switch billing from MySQL to PostgreSQL."))
    assert protected.type == "constraint" and protected.metadata["claim"]["rule"].startswith("auto-protection:")


# -- end to end: a real daemon, HTTP and the CLI ---------------------------------------------------------------
def _jsonl(key: str, turns: list[tuple[str, str]]) -> str:
    import json

    lines = []
    for i, (role, text) in enumerate(turns):
        content = text if role == "user" else [{"type": "text", "text": text}]
        lines.append(json.dumps({"type": role, "sessionId": key, "timestamp": f"2026-03-01T10:{i:02d}:00.000Z",
                                 "message": {"role": role, "content": content}}))
    return "\n".join(lines) + "\n"


def test_session_end_stores_claims_with_evidence_shown_over_http_and_by_kenning_show(daemon):
    project, key = f"claims-{uuid.uuid4().hex[:6]}", f"sess-{uuid.uuid4().hex}"
    turns = [
        ("user", "The nightly export to the ERP is corrupting rows - customers see shifted columns. Can you fix it?"),
        ("assistant", "The writer never quotes fields. Should I quote every field, or only the ones that need it?"),
        ("user", "Only the ones that need it: quote a field only if it contains a comma, a quote or a newline."),
        ("assistant", "Got it. I think the old code might have handled this once?"),
        ("user", "Exactly. My guess is the regression came with the py3 port."),
        ("assistant", "Final: fields are quoted only when they contain a comma, a quote or a newline."),
    ]
    with daemon.client(timeout=300) as http:
        assert http.post("/api/hooks/session-start", json={"session_key": key, "project": project}).status_code == 200
        answer = http.post("/api/hooks/session-end", json={"session_key": key, "wait": True,
                                                           "transcript": _jsonl(key, turns)})
        assert answer.status_code == 200, answer.text
        summary = answer.json()["summary"]
        assert summary["status"] == "done", summary
        assert summary["extraction"]["task"].startswith("The nightly export to the ERP")
        items = http.get("/api/memory", params={"session_key": key, "limit": 100}).json()["items"]
        learned = [m for m in items if m["type"] != "episode"]
        texts = [m["content"] for m in learned]
        assert any(t.startswith("Only the ones that need it") for t in texts)
        assert any(t.startswith("Final: fields are quoted") for t in texts)
        assert not any("customers see" in t or "guess" in t or "?" in t.split("(answering")[0] for t in texts)
        for memory in learned:
            claim = memory["metadata"]["claim"]
            assert claim["rule"] and claim["speaker"] in ("user", "assistant") and claim["ruleset"] == claims.RULESET
            assert memory["confidence"] == claim["confidence"]
            assert bool(memory["needs_review"]) == (claim["confidence"] < claims.REVIEW_BELOW)
        shown = learned[0]
    env = {**os.environ, "KENNING_HOME": str(daemon.home), "KENNING_PORT": str(daemon.port)}
    out = subprocess.run([sys.executable, "-m", "kenning", "show", shown["id"]], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"rule {shown['metadata']['claim']['rule']}" in out.stdout and "speaker" in out.stdout
    assert "needs_review" in out.stdout
