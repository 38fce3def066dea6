"""Redaction, transcript parsing, continuity judges, feedback cleaning, checkpoints (in process)."""

from __future__ import annotations

import json

import pytest

from kenning.core.events import Compacted, PromptSubmitted, SessionStarted
from kenning.sessions.continuity import heuristic_judge, llm_judge
from kenning.sessions.prompt import clean_feedback
from kenning.core.secrets import MARKER_PREFIX, redact
from kenning.sessions.summary import key_facts
from kenning.sessions.transcript import Turn, parse_transcript

SECRETS = [
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.abcdefghijklmnop", "eyJhbGciOiJIUzI1NiJ9"),
    ("curl -H 'Authorization: token ghp_abcdefghijklmnopqrstuvwxyz0123456789'", "ghp_abcdefghij"),
    ("export OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234567890", "sk-proj-abcdefghijklmnop"),
    ("ANTHROPIC_API_KEY=sk-ant-api03-AAAABBBBCCCCDDDDEEEE", "sk-ant-api03"),
    ("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ('DB_PASSWORD="correct horse battery"', "correct horse battery"),
    ("password: hunter2", "hunter2"),
    ('{"api_key": "abc123xyz", "client_secret": "s3cr3t"}', "abc123xyz"),
    ("postgres://app:pa55w0rd@db.internal:5432/app", "pa55w0rd"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAA"),
    ("slack xoxb-123456789012-abcdefghijkl", "xoxb-123456789012"),
]


@pytest.mark.parametrize("text,secret", SECRETS)
def test_redaction_removes_secrets(text, secret):
    out = redact(text)
    assert secret not in out and MARKER_PREFIX in out


def test_redaction_keeps_ordinary_text():
    text = "The tokenizer splits tokens = 5 ways; authors: alice. Use the auth flow in api/keys.py."
    assert redact(text) == text
    assert redact("GITHUB_TOKEN=abc more") == "GITHUB_TOKEN=[REDACTED:secret] more"


def test_transcript_parses_claude_code_jsonl():
    lines = [
        {"type": "user", "message": {"role": "user", "content": "fix the flaky test"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Looking at it."},
            {"type": "tool_use", "name": "Bash", "input": {"command": "pytest -x"}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "content": "1 failed"}]}},
        {"type": "summary", "summary": "ignored"},
    ]
    turns = parse_transcript("\n".join(json.dumps(line) for line in lines))
    assert [(t.role, t.text.split()[0]) for t in turns] == [
        ("user", "fix"), ("assistant", "Looking"), ("tool", "Bash:"), ("tool", "1")]
    plain = parse_transcript("User: hello there\nAssistant: hi\nmore text")
    assert [t.role for t in plain] == ["user", "assistant"] and plain[1].text == "hi\nmore text"


def _row(memory_id, content, injected=True, fts=0, feedback=None, count=0):
    return {"memory_id": memory_id, "content": content, "was_injected": int(injected), "fts_hit_count": fts,
            "agent_relevance_score": feedback, "agent_feedback_count": count}


def test_heuristic_judge_uses_feedback_fts_and_overlap():
    rows = [
        _row("a", "deploy payments with scripts/deploy-payments.sh", fts=2, feedback=0.9, count=3),
        _row("b", "tomato beds need water every three days", feedback=-0.8, count=2),
        _row("c", "payments database is postgresql sixteen", fts=1),
        _row("d", "unrelated gardening compost recipe", injected=False),
    ]
    turns = [Turn("user", "how do I deploy payments? is the database postgresql?"), Turn("assistant", "use the script")]
    prompts = [{"prompt": "deploy payments", "fts_hits": 2}, {"prompt": "what is love", "fts_hits": 0}]
    verdict = heuristic_judge(rows, turns, prompts)
    assert verdict.per_memory["a"] > verdict.per_memory["c"] > verdict.per_memory["b"]
    assert verdict.per_memory["d"] < 0.3
    assert verdict.memories_recalled == 3 and verdict.memories_used >= 1
    assert verdict.novel_context_count == 1 and verdict.missing_topics == ["what is love"]
    assert "2 with agent feedback" in verdict.reasoning and verdict.judge == "heuristic"
    # no feedback, no conversation: little evidence, low confidence
    empty = heuristic_judge([_row("x", "something")], [], [])
    assert empty.confidence <= 0.3 < verdict.confidence


def test_llm_judge_parses_and_drops_invented_ids():
    rows = [_row("a", "deploy with make"), _row("b", "use tabs")]
    answer = ("<think>hmm</think>```json\n" + json.dumps({
        "overall_score": 0.7, "confidence": 0.8, "per_memory_scores": {"a": 0.9, "b": 0.1, "zzz": 1.0},
        "missing_topics": ["ci"], "novel_context_count": 1, "reasoning": "a was used"}) + "\n```")
    prompts_seen = []
    verdict = llm_judge(lambda p: prompts_seen.append(p) or answer, rows, [Turn("user", "deploy?")], [])
    assert verdict.per_memory == {"a": 0.9, "b": 0.1} and verdict.judge == "llm"
    assert verdict.score == 0.7 and verdict.memories_used == 1 and "[a]" in prompts_seen[0]
    with pytest.raises(ValueError):
        llm_judge(lambda p: "no json here", rows, [], [])


def test_feedback_cleaning():
    valid, ignored = clean_feedback({"a": 1, "b": -1.0, "c": 0.5, "d": 1.5, "e": "x", "f": True, "g": float("nan")})
    assert valid == {"a": 1.0, "b": -1.0, "c": 0.5} and ignored == 4
    assert clean_feedback(None) == ({}, 0) and clean_feedback([1, 2]) == ({}, 1)


def test_key_facts_pick_decisions_and_redact():
    turns = [Turn("user", "Add a cache for the sessions."), Turn("assistant", "Which store should I use?"),
             Turn("user", "We decided to use Redis for the session cache. ok. "
                          "Never commit the .env file, it has PASSWORD=hunter2 inside."),
             Turn("assistant", "Sure thing.")]
    facts = key_facts(turns, [], limit=5)
    kinds = {f.type for f in facts}
    assert "decision" in kinds and "constraint" in kinds
    assert all("hunter2" not in f.content for f in facts)
    assert all(f.evidence["speaker"] == "user" and f.evidence["rule"] for f in facts)
    # the request that opens the session is its task, never a rule; an opening that states a rule keeps it
    assert key_facts([Turn("user", "Add a cache for the sessions; the login page is slow.")], [], limit=5) == []
    assert [f.type for f in key_facts([Turn("user", "We decided to use Redis for the session cache.")], [], limit=5)] \
        == ["decision"]


def test_checkpoints_cap_retention_and_interval(kenning):
    cfg = kenning.settings.sessions
    cfg.checkpoint_max_per_session = 2
    cfg.checkpoint_prompt_interval = 2
    cfg.checkpoint_retention_days = 1
    cfg.checkpoint_interval_minutes = 0
    sessions = kenning.sessions
    sessions.session_start(SessionStarted(session_key="old", timestamp="2026-01-01T00:00:00Z"))
    sessions.checkpoint(Compacted(session_key="old", timestamp="2026-01-01T00:10:00Z", context="old one",
                                  trigger="manual"))
    sessions.session_start(SessionStarted(session_key="s", timestamp="2026-01-05T00:00:00Z"))
    for i in range(4):
        sessions.checkpoint(Compacted(session_key="s", context=f"c{i}", timestamp=f"2026-01-05T00:0{i}:00Z",
                                      trigger="manual"))
    kept = sessions.detail("s")["checkpoints"]
    assert [c["content"].split("context:\n")[1].split("\n")[0] for c in kept] == ["c2", "c3"]
    assert sessions.detail("old")["checkpoints"] == []  # older than the retention window
    first = sessions.user_prompt_submit(PromptSubmitted(session_key="s", prompt="one",
                                                        timestamp="2026-01-05T01:00:00Z"))
    second = sessions.user_prompt_submit(PromptSubmitted(session_key="s", prompt="two password=abc123",
                                                         timestamp="2026-01-05T01:01:00Z"))
    assert "checkpoint_id" not in first and second["checkpoint_id"] is not None
    latest = sessions.detail("s")["checkpoints"][-1]
    assert latest["trigger"] == "interval" and "abc123" not in latest["content"] and "two" in latest["content"]
    cfg.checkpoint_interval_minutes = 15  # time-based: one prompt after 20 quiet minutes is enough
    third = sessions.user_prompt_submit(PromptSubmitted(session_key="s", prompt="three",
                                                        timestamp="2026-01-05T01:21:00Z"))
    assert third["checkpoint_id"] is not None
