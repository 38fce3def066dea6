"""The prompt bar reads a prompt against the session (issue 32).

- a precise first prompt's top set holds out a member the per-candidate model puts below `SET_MEMBER_FLOOR`
  (a commit subject about other code that only filled the set);
- a later prompt that names no code ("Lowercasing is right - DNS names are case-insensitive") is read against
  the code the session has been about: a rule for other code that shares its words is held to `OTHER_CODE_BAR`
  as it would be for a prompt naming code (`session_other_code`).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kenning.core.config_sessions import RankingSettings
from kenning.core.events import PromptSubmitted, SessionStarted
from kenning.core.types import Memory, MemoryDraft
from kenning.retrieval.recall import RecallHit
from kenning.sessions import prompt_bar
from kenning.sessions.inject import item_cost
from kenning.store.prompt_candidates import of_session


def _assessed(name: str, rank: int, probability: float, **features: float) -> prompt_bar.Assessed:
    memory = Memory(id=name, content=f"{name} " * 5, normalized_content=name, content_hash=name)
    a = prompt_bar.Assessed(RecallHit(memory, 1.0), rank, {"near_shown": 0.0, "raw": 0.0, "both_legs": 1.0, "cosine": 0.6,
                                                           **features})
    a.probability = probability
    return a


def test_a_top_set_member_below_the_floor_is_held_out():
    """The set rule chooses the top k of recall's order by the set model (which reads mostly k); of those, a member
    below SET_MEMBER_FLOOR is not shown, the others are, in recall order after what passed the bar."""
    cfg = RankingSettings()
    floor = prompt_bar.SET_MEMBER_FLOOR
    pool = [_assessed("rule", 1, 0.6), _assessed("commit", 2, floor / 3), _assessed("episode", 3, 0.3),
            _assessed("bump", 4, floor / 2), _assessed("note", 5, 0.2), _assessed("deep", 6, 0.25)]
    members, chance = prompt_bar._top_k(pool, cfg, cfg.prompt_set_budget_chars)
    assert chance >= cfg.prompt_set_probability and {"commit", "bump"} <= {a.hit.memory.id for a in members}
    shown = [a.hit.memory.id for a in prompt_bar.select(pool, cfg, precise_first=True)]
    assert shown[0] == "rule" and set(shown) == {a.hit.memory.id for a in members} - {"commit", "bump"}
    assert {a.hit.memory.id: a.left_out for a in pool}["commit"] == "below-bar"
    # a vague first prompt is not judged as a set: the bar alone decides
    assert [a.hit.memory.id for a in prompt_bar.select(pool, cfg)] == ["rule"]


def test_a_pool_without_the_vector_leg_keeps_its_whole_top_set():
    """Recall cut by the latency budget: the prompt's BM25 matches stand in, the model's probabilities (which assume
    both legs) are low throughout, and the floor would hold out the needed member with the noise."""
    cfg = RankingSettings()
    floor = prompt_bar.SET_MEMBER_FLOOR
    pool = [_assessed(name, rank, p, cosine=0.0, both_legs=0.0) for rank, (name, p) in enumerate(
        (("a", 0.3), ("needed", floor / 2), ("b", 0.2), ("c", floor / 3), ("d", 0.2), ("e", 0.2)), start=1)]
    members, _ = prompt_bar._top_k(pool, cfg, cfg.prompt_set_budget_chars)
    assert "needed" in {a.hit.memory.id for a in members}
    assert {a.hit.memory.id for a in prompt_bar.select(pool, cfg, precise_first=True)} == {
        a.hit.memory.id for a in members}
    for a in pool:  # the same pool with its vector leg: the floor holds the low members out
        a.features["cosine"], a.left_out = 0.6, None
    assert "needed" not in {a.hit.memory.id for a in prompt_bar.select(pool, cfg, precise_first=True)}


SESSION_CODE = prompt_bar.session_code_names(
    ["is_allowed() in hostallow/policy.py lets WWW.Example.com through although example.com is denied"], [])


def test_a_prompt_naming_no_code_is_read_against_the_code_of_the_session():
    assert SESSION_CODE == {"is_allowed", "hostallow/policy.py"}
    answer = "Lowercasing is right - DNS names are case-insensitive, so compare them folded"
    other = prompt_bar.text_features(answer, "merge_tags: never lowercase a tag, casing is significant", SESSION_CODE)
    same = prompt_bar.text_features(answer, "is_allowed: compare host names case-insensitively", SESSION_CODE)
    plain = prompt_bar.text_features(answer, "DNS names are case-insensitive", SESSION_CODE)
    assert (other["session_other_code"], same["session_other_code"], plain["session_other_code"]) == (1.0, 0.0, 0.0)
    # another file of a folder the session named is its code too (one task spans a module's files); another folder not
    beside = prompt_bar.text_features(answer, "hostallow/cache.py keeps names as typed", SESSION_CODE)
    away = prompt_bar.text_features(answer, "tagging/merge.py keeps names as typed", SESSION_CODE)
    assert (beside["session_other_code"], away["session_other_code"]) == (0.0, 1.0)
    assert other["other_code"] == 0.0, "the prompt itself names no code"
    # a prompt that names code is read against its own code (other_code), a session that named none against nothing
    assert prompt_bar.text_features("merge_tags() drops tags", "merge_tags: keep casing", SESSION_CODE)[
        "session_other_code"] == 0.0
    assert prompt_bar.text_features(answer, "merge_tags: keep casing")["session_other_code"] == 0.0


@pytest.mark.parametrize("bar, shown", [(0.5, {"same", "plain"}), (0.0, {"same", "plain", "other"})])
def test_a_rule_for_other_code_than_the_session_is_held_to_the_higher_bar(bar, shown):
    cfg = RankingSettings(prompt_min_probability=bar)
    pool = [_assessed("same", 1, 0.8), _assessed("other", 2, 0.85, session_other_code=1.0), _assessed("plain", 3, 0.8)]
    assert prompt_bar.OTHER_CODE_BAR > 0.85
    assert {a.hit.memory.id for a in prompt_bar.select(pool, cfg)} == shown


def test_the_session_code_reaches_the_later_prompts_candidates(kenning):
    """Wiring (sessions.prompt): at a later prompt naming no code the candidates are read against what the first
    prompt named; the recorded features say which rule is about other code than the session's."""
    kenning.settings.sessions.latency_budget_ms = 20_000  # a loaded machine must not cut one prompt's recall
    ids = {}
    for name, content in (
            ("other", "merge_tags: never lowercase a tag name - casing is significant to the provider"),
            ("same", "is_allowed: host names are compared lowercased against the deny list"),
            ("plain", "the deny list is reloaded every five minutes")):
        ids[name] = kenning.remember(MemoryDraft(content=content, type="decision", project="hosts", confidence=0.7,
                                                 created_at="2026-01-01T00:00:00Z")).id
    key = "hosts-1"
    kenning.sessions.session_start(SessionStarted(session_key=key, project="hosts", timestamp="2026-06-01T09:00:00Z"))
    for minute, prompt in enumerate((
            "is_allowed() in hostallow/policy.py lets WWW.Example.com through although example.com is on the deny list",
            "Lowercasing is right - host names are case-insensitive, lowercase the name before the lookup"), start=1):
        kenning.sessions.user_prompt_submit(PromptSubmitted(session_key=key, prompt=prompt,
                                                            timestamp=f"2026-06-01T09:0{minute}:00Z"))
    later = {r["memory_id"]: r for r in of_session(kenning.db.reader(), key) if r["prompt_index"] == 2}
    assert ids["other"] in later, "recall offers the rule for other code at the later prompt (it shares its words)"
    assert later[ids["other"]]["features"]["session_other_code"] == 1.0
    assert all(r["features"]["session_other_code"] == 0.0 for m, r in later.items() if m != ids["other"])
    # the model alone would show it (p 0.78 here): the code of the session holds it to OTHER_CODE_BAR
    p = later[ids["other"]]["probability"]
    assert kenning.settings.sessions.ranking.prompt_min_probability <= p < prompt_bar.OTHER_CODE_BAR
    assert not later[ids["other"]]["shown"]



def test_a_top_set_fills_the_room_it_is_given_and_a_member_above_the_bar_costs_its_whole_line():
    """`_top_k` fills the room its caller gives (`prompt_set_budget_chars` less what session start showed): a
    member below the bar costs its excerpt, one at or above the bar its whole line, which is what it shows."""
    pool = [_assessed(f"m{rank}", rank, 0.3) for rank in range(1, 6)]
    for a in pool:
        a.hit.memory = replace(a.hit.memory, content="a long note about the ledger " * 20)  # 580 characters
    part = item_cost(prompt_bar.excerpt(pool[0].hit.memory.content, RankingSettings().prompt_set_item_chars))
    whole = item_cost(pool[0].hit.memory.content)
    cfg = RankingSettings(prompt_set_max=5, prompt_set_probability=prompt_bar.set_probability(pool))  # k = 5 only
    assert len(prompt_bar._top_k(pool, cfg, 5 * part)[0]) == 5
    assert prompt_bar._top_k(pool, cfg, 5 * part - 1)[0] == [], "a smaller room: no set"
    pool[0].probability = 0.9  # above the bar
    cfg = RankingSettings(prompt_set_max=5, prompt_set_probability=prompt_bar.set_probability(pool))
    assert prompt_bar._top_k(pool, cfg, 5 * part)[0] == [], "one whole line and four excerpts do not fit"
    assert len(prompt_bar._top_k(pool, cfg, 4 * part + whole)[0]) == 5
    # what passed the bar is shown whole before the set: it fills the room first, and a member of it is not counted twice
    other = _assessed("above-the-bar", 9, 0.95)
    assert prompt_bar._top_k(pool, cfg, 4 * part + whole, kept=[other])[0] == []
    assert len(prompt_bar._top_k(pool, cfg, 4 * part + whole + item_cost(other.hit.memory.content), kept=[other])[0]) == 5
    assert len(prompt_bar._top_k(pool, cfg, 4 * part + whole, kept=[pool[0]])[0]) == 5


def test_a_top_set_takes_at_most_two_members_from_one_earlier_session():
    """One chat's exchange and rules rise and fall together: the set takes at most `SET_PER_SESSION` of them and
    goes on down recall's order, where the commit that holds the decision may be (the real Claude Code CLI's
    seqledger task: the twin chat's episode and four rules filled the set, the commit sat at rank 10)."""
    pool = [_assessed(f"chat-{rank}", rank, 0.2) for rank in range(1, 5)] + [_assessed("commit", 5, 0.15)]
    for a in pool[:4]:
        a.hit.memory = replace(a.hit.memory, session_key="the-twin-chat")
    # the set probability is reached with the third member (the set model reads mostly k)
    cfg = RankingSettings(prompt_set_max=3, prompt_set_probability=prompt_bar.set_probability(pool[:3]) - 0.01)
    assert prompt_bar.SET_PER_SESSION == 2
    members, _ = prompt_bar._top_k(pool, cfg, cfg.prompt_set_budget_chars)
    assert [a.hit.memory.id for a in members] == ["chat-1", "chat-2", "commit"]
    for a in pool:  # memories of no session (commits, the user's own notes) are each their own source
        a.hit.memory = replace(a.hit.memory, session_key=None)
    members, _ = prompt_bar._top_k(pool, cfg, cfg.prompt_set_budget_chars)
    assert [a.hit.memory.id for a in members] == ["chat-1", "chat-2", "chat-3"]
