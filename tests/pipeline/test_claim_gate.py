"""The LLM claim gate (issue 22): with an OpenAI-protocol LLM configured, the session's candidate
claims are judged by the model before they are written — against a real local HTTP server."""

from __future__ import annotations

import json
import re

from pipeline_helpers import Reply, openai_llm

from kenning.core.events import SessionEnded, SessionStarted
from kenning.core import claims

TRANSCRIPT = (
    "User: The CSV export drops leading zeros from part numbers. Can you fix it?\n"
    "Assistant: Should I quote every field, or only the digit strings?\n"
    "User: Only the digit strings with a leading zero: write them as =\"00042\".\n"
    "User: And rows must end with CRLF, the ERP rejects bare LF.\n"
    "User: Never log the customer names in the exporter.\n"
)


def _answers(judge):
    """A scripted model: answers the claim_gate task with `judge(candidate)` for each candidate."""
    def script(task: str, prompt: str):
        if task != "claim_gate":
            return Reply(json.dumps({"facts": [], "entities": []}))
        block = re.search(r"<<<KENNING_TASK:claim_gate>>>\s*(.*?)\s*<<<END_KENNING_TASK>>>", prompt, re.S)
        candidates = json.loads(block.group(1))["candidates"]
        return Reply(json.dumps({"claims": [judge(c) for c in candidates] + [{"id": "bogus"}]}))
    return script


def test_the_llm_gate_drops_chatter_and_its_confidence_decides_review(make_kenning, fake_llm):
    def judge(c):
        if "CRLF" in c["text"]:
            return {"id": c["id"], "durable": False, "type": "constraint", "confidence": 0.9, "reason": "chatter"}
        if "log" in c["text"]:
            return {"id": c["id"], "durable": True, "type": "preference", "confidence": 0.55, "reason": "unsure"}
        return {"id": c["id"], "durable": True, "type": "constraint", "confidence": 0.92, "reason": "a rule"}

    fake_llm.script = _answers(judge)
    k = make_kenning(llm=openai_llm(fake_llm))
    k.sessions.session_start(SessionStarted(session_key="gate-1", project="gate"))
    out = k.sessions.session_end(SessionEnded(session_key="gate-1", transcript=TRANSCRIPT), wait=True)
    assert out["summary"]["status"] == "done", out
    asked = fake_llm.generations("claim_gate")
    assert len(asked) == 1 and "JSON schema of the answer" in asked[0]["prompt"]
    extraction = out["summary"]["extraction"]
    assert extraction["gated_out"] == 1
    rows = k.db.reader().execute(
        "SELECT content, type, confidence, needs_review, metadata FROM memories WHERE session_key = 'gate-1'"
        " AND type != 'episode'").fetchall()
    learned = {r[0]: r for r in rows}
    assert not any("CRLF" in text for text in learned)  # the model called it chatter: not written
    zeros = next(r for text, r in learned.items() if text.startswith("Only the digit strings"))
    names = next(r for text, r in learned.items() if "customer names" in text)
    assert (zeros[2], zeros[3]) == (0.92, 0)
    assert (names[1], names[2], names[3]) == ("preference", 0.55, 1)  # below the gate: needs_review
    evidence = json.loads(names[4])["claim"]
    assert evidence["llm"]["confidence"] == 0.55 and evidence["rule"] == "user-rule"


def test_a_failing_llm_leaves_the_rules_verdicts(make_kenning, fake_llm):
    fake_llm.script = lambda task, prompt: Reply("{}", status=500) if task == "claim_gate" else \
        Reply(json.dumps({"facts": [], "entities": []}))
    k = make_kenning(llm=openai_llm(fake_llm))
    k.sessions.session_start(SessionStarted(session_key="gate-2", project="gate"))
    out = k.sessions.session_end(SessionEnded(session_key="gate-2", transcript=TRANSCRIPT), wait=True)
    assert out["summary"]["status"] == "done", out
    assert fake_llm.generations("claim_gate")
    rows = k.db.reader().execute("SELECT content, confidence, metadata FROM memories WHERE session_key = 'gate-2'"
                                 " AND type != 'episode'").fetchall()
    assert any("CRLF" in r[0] for r in rows)  # the rules kept it; nothing was lost to the failure
    assert all("llm" not in json.loads(r[2])["claim"] and r[1] == json.loads(r[2])["claim"]["confidence"] for r in rows)
    assert all(json.loads(r[2])["claim"]["ruleset"] == claims.RULESET for r in rows)


def test_the_llm_gate_never_lifts_an_unaccepted_assistant_recap_out_of_review(make_kenning, fake_llm):
    """Issue 33 item 1: the model may call an assistant recap durable at 0.95, but no user accepted it
    (the next user turn is an unrelated request), so it is written needs_review, never standing."""
    fake_llm.script = _answers(lambda c: {"id": c["id"], "durable": True, "type": "constraint", "confidence": 0.95,
                                          "reason": "a rule"})
    k = make_kenning(llm=openai_llm(fake_llm))
    k.sessions.session_start(SessionStarted(session_key="gate-3", project="gate"))
    transcript = ("User: Can you fix the flaky deploy script?\n"
                  "Assistant: Noted: releases always ship on Fridays without a staging run.\n"
                  "User: Now add a --verbose flag to the export CLI.\n"
                  "User: Never log the customer names in the exporter.\n")
    out = k.sessions.session_end(SessionEnded(session_key="gate-3", transcript=transcript), wait=True)
    assert out["summary"]["status"] == "done", out
    rows = k.db.reader().execute("SELECT content, confidence, needs_review, metadata FROM memories"
                                 " WHERE session_key = 'gate-3' AND type != 'episode'").fetchall()
    recap = [r for r in rows if "Fridays" in r[0]]
    user = [r for r in rows if "customer names" in r[0]]
    assert len(recap) == 1 and recap[0][2] == 1 and recap[0][1] < claims.REVIEW_BELOW
    assert json.loads(recap[0][3])["claim"]["rule"] == "unaccepted-recap"
    assert len(user) == 1 and (user[0][1], user[0][2]) == (0.95, 0)  # the user's own rule: the model's confidence


def test_the_llm_gate_may_rewrite_a_completed_fragment_keeping_what_was_said(make_kenning, fake_llm):
    """Issue 31 item 2: the rules complete "Case-INSENSITIVE, always." with the code its chat names; the model
    may rewrite it as one whole sentence (the original kept as evidence). A rewrite that drops the code the
    claim names, or is not whole, is refused and the rules' text stays."""
    def judge(c):
        answer = {"id": c["id"], "durable": True, "type": "constraint", "confidence": 0.9, "reason": "a rule"}
        if "Case-INSENSITIVE" in c["text"]:
            answer["rewrite"] = "parse_quantity unit suffixes are case-insensitive, always."
        elif "Kelvin" in c["text"]:
            answer["rewrite"] = "Only that one."  # not whole: refused
        return answer

    fake_llm.script = _answers(judge)
    k = make_kenning(llm=openai_llm(fake_llm))
    k.sessions.session_start(SessionStarted(session_key="gate-4", project="gate"))
    transcript = ("User: parse_quantity('5K') and parse_quantity('5k') disagree. Can you fix it?\n"
                  "Assistant: Should the unit suffixes be matched case-sensitively?\n"
                  "User: Case-INSENSITIVE, always.\n"
                  "User: Kelvin temperatures must never be negative in parse_quantity.\n")
    out = k.sessions.session_end(SessionEnded(session_key="gate-4", transcript=transcript), wait=True)
    assert out["summary"]["status"] == "done", out
    rows = {r[0]: json.loads(r[1])["claim"] for r in k.db.reader().execute(
        "SELECT content, metadata FROM memories WHERE session_key = 'gate-4' AND type != 'episode'").fetchall()}
    assert rows["parse_quantity unit suffixes are case-insensitive, always."]["original"].startswith(
        "`parse_quantity`: Case-INSENSITIVE, always.")
    kelvin = rows["Kelvin temperatures must never be negative in parse_quantity."]
    assert "original" not in kelvin
