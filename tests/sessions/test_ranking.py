"""What kenning shows unasked (sessions.ranking, issue 22): standing rules with evidence, one
continuity item, no raw exchanges / commits / unreviewed claims at session start or on a step,
and a memory the agent rates down in two sessions leaves session start until new evidence that it
belongs there (a useful rating at session start, a review, a pin; not a useful rating where a query
found it)."""

from __future__ import annotations

from kenning.core.events import Harness, PromptSubmitted, SessionEnded, SessionStarted
from kenning.core.types import MemoryDraft, MemoryFilter
from kenning.observer import decider
from kenning.observer.scratchpad import Scratchpad, StepContext
from kenning.sessions import ranking


def _start(k, key: str, project: str, at: str) -> dict:
    return k.sessions.session_start(SessionStarted(session_key=key, project=project, cwd=f"/src/{project}",
                                                   timestamp=at))


def _rows(k, key: str) -> dict[str, dict]:
    return {r["memory_id"]: r for r in k.sessions.detail(key)["memories"]}


def _remember(k, content: str, **kw) -> str:
    kw.setdefault("created_at", "2026-01-01T00:00:00Z")  # before the sessions below
    kw.setdefault("applies", "project")  # what these tests show at session start holds project-wide (issue 31)
    return k.remember(MemoryDraft(content=content, **kw)).id


def test_a_memory_rated_low_in_two_sessions_leaves_session_start_until_new_start_evidence(kenning):
    project = "ratings"
    rule = _remember(kenning, "Deploys of the billing service go through scripts/release.sh only",
                     type="constraint", project=project, importance=0.9)
    other = _remember(kenning, "Never log raw card numbers in the billing service", type="constraint",
                      project=project, importance=0.8)
    s1 = _start(kenning, "r1", project, "2026-03-01T09:00:00Z")
    assert {rule, other} <= set(s1["memory_ids"])  # confidence 1.0, a constraint: a standing rule
    kenning.sessions.feedback("r1", {rule: 0.0, other: 0.9})
    s2 = _start(kenning, "r2", project, "2026-03-02T09:00:00Z")
    assert rule in s2["memory_ids"]  # one low rating is not enough
    kenning.sessions.feedback("r2", {rule: 0.2, other: 0.8})
    s3 = _start(kenning, "r3", project, "2026-03-03T09:00:00Z")
    assert rule not in s3["memory_ids"] and other in s3["memory_ids"]
    rows = _rows(kenning, "r3")
    assert rows[rule]["was_injected"] == 0 and rows[rule]["baseline_rank"]  # still a recorded candidate
    # a query finds it and the agent rates it useful: useful when asked, not evidence for session start
    p = kenning.sessions.user_prompt_submit(PromptSubmitted(session_key="r3", prompt="how do billing deploys go out?",
                                                            timestamp="2026-03-03T09:01:00Z"))
    assert rule in p["memory_ids"]
    assert _rows(kenning, "r3")[rule]["inject_phase"].startswith("prompt")
    kenning.sessions.feedback("r3", {rule: 0.9})
    _start(kenning, "r4", project, "2026-03-04T09:00:00Z")
    # the last session found it useful: it comes back only as the task in progress (issue 32), not as a standing rule
    assert _rows(kenning, "r4")[rule]["prefilter_source"] == "continuing"
    judged = ranking.verdicts(kenning.db.reader(), [kenning.get(rule)], "2026-03-05T00:00:00Z",
                              kenning.settings.sessions.ranking)
    assert judged[rule][0] == "demoted" and judged[rule][1].useful_sessions == 1
    # evidence for session start: the user edits it in review -> it opens sessions again
    kenning.review.edit(rule, content="Deploys of the billing service go through scripts/release.sh only, never by hand")
    assert rule in _start(kenning, "r5", project, "2026-03-05T09:00:00Z")["memory_ids"]


def test_a_useful_rating_at_session_start_restarts_the_count_and_a_query_rating_does_not(kenning):
    """The longrun mechanism (issue 22): a topic memory rated useful when its topic was asked about
    becomes standing; at session starts about other topics it is rated down twice and leaves; the
    next useful rating where a query found it does not bring it back. A useful rating where session
    start showed it does restart the count against it."""
    project = "phases"
    topic = _remember(kenning, "The geo-tiler keeps its tiles in SQLite files per tenant", type="fact",
                      project=project, confidence=0.6, importance=0.7, source="cli")  # the user's words (issue 33)
    steady = _remember(kenning, "Never call the billing API from a request handler", type="constraint",
                       project=project, importance=0.8)
    assert topic not in _start(kenning, "q1", project, "2026-07-01T09:00:00Z")["memory_ids"]  # no evidence yet
    found = kenning.sessions.user_prompt_submit(PromptSubmitted(session_key="q1",
                                                                prompt="where does geo-tiler keep its tiles?",
                                                                timestamp="2026-07-01T09:01:00Z"))
    assert topic in found["memory_ids"]
    kenning.sessions.feedback("q1", {topic: 1.0})
    assert topic in _start(kenning, "q2", project, "2026-07-02T09:00:00Z")["memory_ids"]  # confirmed by use
    kenning.sessions.feedback("q2", {topic: 0.0, steady: 0.0})
    assert {topic, steady} <= set(_start(kenning, "q3", project, "2026-07-03T09:00:00Z")["memory_ids"])
    kenning.sessions.feedback("q3", {topic: 1.0, steady: 0.0})  # useful at start
    assert _rows(kenning, "q3")[topic]["inject_phase"] == "session-start"
    s4 = _start(kenning, "q4", project, "2026-07-04T09:00:00Z")["memory_ids"]
    assert topic in s4 and steady not in s4  # topic: one low since its useful start rating; steady: two lows
    kenning.sessions.feedback("q4", {topic: 0.0})
    assert topic in _start(kenning, "q5", project, "2026-07-05T09:00:00Z")["memory_ids"]
    kenning.sessions.feedback("q5", {topic: 0.1})
    assert topic not in _start(kenning, "q6", project, "2026-07-06T09:00:00Z")["memory_ids"]  # two lows: it leaves
    again = kenning.sessions.user_prompt_submit(PromptSubmitted(session_key="q6",
                                                                prompt="where does geo-tiler keep its tiles?",
                                                                timestamp="2026-07-06T09:01:00Z"))
    assert topic in again["memory_ids"]  # a query still finds it
    kenning.sessions.feedback("q6", {topic: 1.0})
    _start(kenning, "q7", project, "2026-07-07T09:00:00Z")  # asked ≠ start: back only as the task in progress
    assert _rows(kenning, "q7")[topic]["prefilter_source"] == "continuing"  # (issue 32), not as a standing rule
    kenning.review.accept(topic)  # the user's word: it opens sessions again
    assert topic in _start(kenning, "q8", project, "2026-07-08T09:00:00Z")["memory_ids"]


def test_low_ratings_where_a_query_found_a_memory_do_not_count_against_it_at_session_start(kenning):
    project = "asked"
    rule = _remember(kenning, "Never call the billing API from a request handler", type="constraint",
                     project=project, importance=0.8)
    for n, day in enumerate(("01", "02", "03"), start=1):
        key = f"a{n}"
        # session start shows it and the agent finds it useful there ...
        assert rule in _start(kenning, key, project, f"2026-08-{day}T09:00:00Z")["memory_ids"]
        kenning.sessions.feedback(key, {rule: 1.0})
    # ... while a memory a query found twice and rated down (another subject) is not demoted by that
    other = _remember(kenning, "The billing API client retries twice on 503", type="fact", project=project,
                      confidence=0.6, importance=0.4)
    for n, day in enumerate(("04", "05"), start=4):
        key = f"a{n}"
        _start(kenning, key, project, f"2026-08-{day}T09:00:00Z")
        found = kenning.sessions.user_prompt_submit(PromptSubmitted(session_key=key,
                                                                    prompt="does the billing API client retry on 503?",
                                                                    timestamp=f"2026-08-{day}T09:01:00Z"))
        assert other in found["memory_ids"]
        kenning.sessions.feedback(key, {other: 0.0, rule: 1.0})
    judged = ranking.verdicts(kenning.db.reader(), [kenning.get(other)], "2026-08-06T00:00:00Z",
                              kenning.settings.sessions.ranking)
    assert judged[other][0] == ranking.ELIGIBLE and judged[other][1].low_sessions == 0


def test_raw_exchanges_commits_and_unreviewed_claims_wait_for_a_query(kenning):
    project = "rawness"
    rule = _remember(kenning, "The importer must skip rows without an owner", type="constraint", project=project)
    episode = _remember(kenning, "User: the quokka importer crashes Assistant: I looked at quokka and the tests pass now",
                        type="episode", project=project, source="session-episode", importance=0.95)
    commit = _remember(kenning, "Fix quokka importer crash on empty owner\n\nSkip rows whose owner is null.",
                       project=project, source="git", importance=0.95)
    unreviewed = _remember(kenning, "We always run the quokka importer twice", type="decision", project=project,
                           confidence=0.55, needs_review=True, source="session-summary", importance=0.95)
    start = _start(kenning, "w1", project, "2026-04-01T09:00:00Z")
    assert start["memory_ids"] == [rule]
    rows = _rows(kenning, "w1")
    assert {episode, commit, unreviewed} <= set(rows)  # recorded candidates, for the predictor
    assert not any(rows[m]["was_injected"] for m in (episode, commit, unreviewed))
    prompt = kenning.sessions.user_prompt_submit(PromptSubmitted(session_key="w1",
                                                                 prompt="why does the quokka importer crash?",
                                                                 timestamp="2026-04-01T09:02:00Z"))
    assert commit in prompt["memory_ids"] or episode in prompt["memory_ids"]  # a query finds raw memories
    # a needs_review claim (a session summary's) a query finds is not shown at a prompt either (issue 33: only
    # the user makes a rule); rated useful by the agent (a session-start candidate row) it stays in review:
    # agent ratings alone never make a memory standing
    asked = kenning.sessions.user_prompt_submit(PromptSubmitted(session_key="w1",
                                                                prompt="do we run the quokka importer twice?",
                                                                timestamp="2026-04-01T09:05:00Z"))
    assert unreviewed not in asked["memory_ids"] and not _rows(kenning, "w1")[unreviewed]["was_injected"]
    assert unreviewed in [h.memory.id for h in kenning.recall("do we run the quokka importer twice?",
                                                               filters=MemoryFilter(project=project))]  # found, held
    kenning.sessions.feedback("w1", {unreviewed: 0.9})
    assert unreviewed not in _start(kenning, "w2", project, "2026-04-02T09:00:00Z")["memory_ids"]
    judged = ranking.verdicts(kenning.db.reader(), [kenning.get(unreviewed)], "2026-04-03T00:00:00Z",
                              kenning.settings.sessions.ranking)
    assert judged[unreviewed][0] == "needs_review" and judged[unreviewed][1].useful_sessions == 1


def test_accepting_in_review_lets_a_claim_start_sessions_and_rejecting_keeps_it_out(kenning):
    project = "reviewed"
    a = _remember(kenning, "Use ruff for formatting in this repository", type="preference", project=project,
                  confidence=0.6, needs_review=True, source="session-summary", session_key="learn-1")
    b = _remember(kenning, "Always rebase feature branches before review", type="constraint", project=project,
                  confidence=0.6, needs_review=True, source="session-summary", session_key="learn-1")
    assert not {a, b} & set(_start(kenning, "v1", project, "2026-05-01T09:00:00Z")["memory_ids"])
    assert kenning.review.accept(a)["user_verified"] is True
    kenning.review.reject(b, reason="not a rule, a remark")
    shown = _start(kenning, "v2", project, "2026-05-02T09:00:00Z")["memory_ids"]
    assert a in shown and b not in shown
    assert kenning.get(b).is_deleted is False  # reject is non-destructive


def test_continuity_is_one_item_with_the_last_sessions_task_and_outcome(kenning):
    project = "continuity"
    kenning.sessions.session_start(SessionStarted(session_key="c1", project=project, harness=Harness.CLAUDE_CODE,
                                                  timestamp="2026-06-01T09:00:00Z"))
    kenning.sessions.user_prompt_submit(PromptSubmitted(session_key="c1",
                                                        prompt="fix the flaky retry test in billing",
                                                        timestamp="2026-06-01T09:01:00Z"))
    transcript = ("User: fix the flaky retry test in billing\n"
                  "Assistant: The retry test raced the queue drain.\n"
                  "User: ok, make it deterministic\n"
                  "Assistant: Fixed: the retry test now waits for the queue to drain before asserting.\n")
    kenning.sessions.session_end(SessionEnded(session_key="c1", transcript=transcript,
                                              timestamp="2026-06-01T09:30:00Z"), wait=True)
    episodes = [m.id for m in kenning.list(MemoryFilter(session_key="c1"), limit=100, offset=0)[0]]
    assert episodes  # the session's exchanges were stored (raw, recallable)
    start = kenning.sessions.session_start(SessionStarted(session_key="c2", project=project,
                                                          timestamp="2026-06-02T09:00:00Z"))
    text = start["inject"]
    assert "Where the last session left off" in text
    block = text.split("Where the last session left off", 1)[1]
    assert "fix the flaky retry test in billing" in block and "waits for the queue to drain" in block
    assert "claude-code" in block and block.count("\n- ") == 1  # one item
    assert not set(episodes) & set(start["memory_ids"])
    assert "User: ok, make it deterministic" not in text  # not its raw exchanges
    # a replay of the same key answers the same block
    again = kenning.sessions.session_start(SessionStarted(session_key="c2", project=project,
                                                          timestamp="2026-06-02T09:00:00Z"))
    assert again["inject"] == text


def test_step_injection_shows_only_what_may_be_shown_unasked(kenning):
    project = "steps"
    gotcha = _remember(kenning, "Careful: src/app/db.py opens a second connection on import", type="gotcha",
                       project=project, related_files=["src/app/db.py"], confidence=0.9)
    unreviewed = _remember(kenning, "Turns out src/app/db.py leaks a cursor", type="gotcha", project=project,
                           related_files=["src/app/db.py"], confidence=0.9, needs_review=True,
                           source="session-summary")
    pad = Scratchpad(session_key="st1", project=project, cwd="/src/steps")
    ctx = StepContext(tool="Read", files=["src/app/db.py"])
    decision = decider.decide(kenning.db, kenning.settings.observer, pad, ctx, kenning.settings.sessions.ranking)
    assert gotcha in decision.ids and unreviewed not in decision.ids
    judged = ranking.verdicts(kenning.db.reader(), [kenning.get(gotcha), kenning.get(unreviewed)], None,
                              kenning.settings.sessions.ranking)
    assert judged[gotcha][0] == ranking.STANDING and judged[unreviewed][0] == "needs_review"


def test_on_a_team_server_continuity_comes_only_from_the_users_own_sessions(kenning):
    from kenning.core.types import Viewer

    project = "shared-repo"
    alice, bob = Viewer("alice", team="core"), Viewer("bob", team="core")
    kenning.sessions.session_start(SessionStarted(session_key="a1", project=project, timestamp="2026-07-01T09:00:00Z"),
                                   viewer=alice)
    kenning.sessions.user_prompt_submit(PromptSubmitted(session_key="a1",
                                                        prompt="rotate the leaked staging credentials",
                                                        timestamp="2026-07-01T09:01:00Z"), viewer=alice)
    with kenning.db.with_write_tx() as conn:  # what the team server's session guard records (sessions.owner)
        conn.execute("UPDATE sessions SET owner = ? WHERE session_key = ?", ("alice", "a1"))
    bob_start = kenning.sessions.session_start(SessionStarted(session_key="b1", project=project,
                                                              timestamp="2026-07-02T09:00:00Z"), viewer=bob)
    assert "rotate the leaked staging credentials" not in bob_start["inject"]
    alice_start = kenning.sessions.session_start(SessionStarted(session_key="a2", project=project,
                                                                timestamp="2026-07-03T09:00:00Z"), viewer=alice)
    assert "rotate the leaked staging credentials" in alice_start["inject"]


def test_the_first_prompt_leaves_slots_empty_rather_than_fill_them_with_weak_matches(kenning):
    project = "floor"
    on_topic = _remember(kenning, "ledger-sync retries use exponential backoff capped at 30 seconds",
                         type="decision", project=project, confidence=0.7)  # not at session start: eligible
    # each shares one common word of the prompt ("tests") and nothing else: noise for this task
    weak = [_remember(kenning, f"Done: {n} tests pass for {name}.", type="episode", project=project,
                      source="session-episode")
            for n, name in ((12, "geo-tiler"), (31, "mail-digest"), (47, "quota-keeper"), (58, "pager-bridge"))]
    rejected = _remember(kenning, "ledger-sync retries: we never retry, ever", type="decision", project=project)
    kenning.review.reject(rejected, reason="wrong")
    assert not _start(kenning, "f1", project, "2026-06-01T09:00:00Z")["memory_ids"]
    prompt = kenning.sessions.user_prompt_submit(PromptSubmitted(session_key="f1",
                                                                 prompt="fix the failing ledger-sync retries tests",
                                                                 timestamp="2026-06-01T09:01:00Z"))
    shown = prompt["memory_ids"]
    assert on_topic in shown
    assert not set(weak) & set(shown), [kenning.get(m).content for m in shown]
    if rejected in shown:  # a query may still find a rejected memory, after what was not rejected
        assert shown.index(rejected) > shown.index(on_topic)
