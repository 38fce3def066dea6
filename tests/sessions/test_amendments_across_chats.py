"""Amendments across chats (issue 32's coding-memory miss): an amendment the user accepts supersedes the rule it
amends, and an explicit amendment marks the earlier chat it amends even where that chat's old rule lives only in
its exchanges (bench/coding_memory.py, sde dev split, tagmerge family: chat A's kill list was never extracted as a
rule, so nothing linked the amendment to A and recall showed A's stale exchanges alone). Real daemon, session-end
hooks.
"""

from __future__ import annotations

import uuid

RULE = [
    ("user", "Tag cleanup for the CMDB sync."),
    ("assistant", "What should merge_tags do with the casing of tags?"),
    ("user", "Never lowercase the tags in merge_tags output: the Terraform provider treats tag casing as significant."),
]
AMENDMENT = ("assistant", "Amended rule, superseding the casing rule: merge_tags lowercases every tag in its output "
                          "from now on, so the duplicates collapse.")
# a chat that settles the tombstones' kill list in its exchange only (no rule of it is extracted)
KILL_LIST_CHAT = [
    ("user", "How does merge_tags handle the '-name' tombstones the ops sync writes into the tag sources?"),
    ("assistant", "merge_tags collects every '-name' tombstone across all the sources into one kill list and "
                  "strips that tag from the entire merged result."),
    ("user", "Thanks, that's all for now."),
]
INCIDENT = ("user", "Incident-driven amendment to the tag-merge decision: the legacy inventory deleted a tag the "
                    "CMDB asserts.")
# a chat that settles merge_tags' casing and tombstone rules (two rules of one function)
MERGE_POLICY_CHAT = [
    ("user", "merge_tags gets an ordered list of tag sources next sprint; we need to settle its merge policy."),
    ("assistant", "Should merge_tags lowercase the output, and which casing survives?"),
    ("user", "Never lowercase the merge_tags output: keep the casing of the first occurrence, which is the "
             "highest-precedence source."),
    ("user", "And the rule is that merge_tags removes a tag everywhere when any source carries its '-name' tombstone.")]


def _hook(http, event: str, body: dict) -> dict:
    response = http.post(f"/api/hooks/{event}", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def _chat(http, project: str, at: str, turns: list[tuple[str, str]]) -> tuple[str, dict]:
    key = f"chat-{uuid.uuid4().hex}"
    _hook(http, "session-start", {"session_key": key, "project": project, "timestamp": at})
    transcript = "\n".join(f"{'User' if role == 'user' else 'Assistant'}: {text}" for role, text in turns)
    result = _hook(http, "session-end", {"session_key": key, "transcript": transcript, "wait": True})
    assert result["summary"]["status"] == "done", result
    return key, result["summary"]


def _rules(http, key: str) -> list[dict]:
    response = http.get("/api/memory", params={"session_key": key, "limit": 1000})
    assert response.status_code == 200, response.text
    return [m for m in response.json()["items"] if m["type"] != "episode"]


def _amend(http, follow_up: tuple[str, str]) -> tuple[dict, dict, dict]:
    """The user's rule, then a later chat's amendment followed by `follow_up`: (old rule now, amendment, summary)."""
    project = f"tags-{uuid.uuid4().hex[:6]}"
    old_key, _ = _chat(http, project, "2025-01-10T10:00:00Z", RULE)
    (old,) = [m for m in _rules(http, old_key) if "Never lowercase" in m["content"]]
    assert old["metadata"]["claim"]["speaker"] == "user"
    new_key, summary = _chat(http, project, "2025-02-10T10:00:00Z", [
        ("user", "The duplicate tags are back in the UI; what do we do about casing?"), AMENDMENT, follow_up])
    (new,) = [m for m in _rules(http, new_key) if "lowercases every tag" in m["content"]]
    return http.get(f"/api/memory/{old['id']}").json(), new, summary


def test_an_amendment_the_user_accepts_supersedes_the_rule(daemon):
    with daemon.client(timeout=300) as http:
        old, new, summary = _amend(http, ("user", "yes, exactly, do that"))
    assert not new["needs_review"] and new["metadata"]["claim"]["accepted"] is True
    assert old["superseded_by"] == new["id"] and summary["extraction"]["superseded"] == [old["id"]]


def test_an_amendment_marks_the_chat_whose_rule_lives_only_in_its_exchanges(daemon):
    """A chat whose old behaviour (a global kill list) lives in its exchanges only — no rule of it says so, as in
    the tagmerge family's chat A, whose "Yes — removed means removed" was not extracted — has no rule to
    supersede; the amendment's nearest earlier exchange is that chat's, so the chat's memories hold a rule the
    amendment replaced (`amended_by`) and recall puts the amendment first."""
    project = f"tomb-{uuid.uuid4().hex[:6]}"
    with daemon.client(timeout=300) as http:
        old_key, _ = _chat(http, project, "2025-01-10T10:00:00Z", KILL_LIST_CHAT)
        new_key, _ = _chat(http, project, "2025-02-10T10:00:00Z", [INCIDENT,
            ("assistant", "Amended rule, superseding the kill list: merge_tags strips a '-name' tombstone's tag from "
                          "the lower-precedence sources only, never from a source above it."),
            ("user", "Yes, that's the rule going forward.")])
        (amendment,) = [m for m in _rules(http, new_key) if m["content"].startswith("Amended rule")]
        assert amendment["metadata"]["amends"] == 2 and not amendment["needs_review"]
        old = http.get("/api/memory", params={"session_key": old_key, "limit": 100}).json()["items"]
        assert old and not [m for m in old if m["type"] != "episode"]  # nothing to supersede
        assert all(amendment["id"] in m["metadata"].get("amended_by", []) for m in old)
        hits = http.post("/api/memory/recall", json={
            "query": "merge_tags: how do '-name' tombstones suppress tags across the sources?",
            "project": project}).json()["results"]
    assert hits[0]["id"] == amendment["id"]  # the stale chat never comes first


def test_an_amendment_naming_no_code_names_the_code_of_the_rules_it_supersedes(daemon):
    """Issue 31: a later chat's "Amended rule in full, superseding the original: …" never names `merge_tags`; only the
    chat it amends does ("the tag-merge decision"). The amendment takes the one code area of the earlier rules it
    supersedes: its text names `merge_tags`, its area is merge_tags, and what was said stays as evidence."""
    project = f"merge-{uuid.uuid4().hex[:6]}"
    said = ("Amended rule in full, superseding the original: sources arrive highest precedence first; union in "
            "precedence order, de-duplicated case-insensitively, keeping the casing of the first occurrence.")
    with daemon.client(timeout=300) as http:
        old_key, _ = _chat(http, project, "2025-01-10T10:00:00Z", MERGE_POLICY_CHAT)
        earlier = _rules(http, old_key)
        assert earlier and {m["area"] for m in earlier} == {"merge_tags"}
        new_key, _ = _chat(http, project, "2025-02-10T10:00:00Z", [
            INCIDENT,
            ("assistant", said),
            ("user", "That's the rule going forward.")])
        (amendment,) = [m for m in _rules(http, new_key) if "Amended rule in full" in m["content"]]
    assert amendment["content"] == f"`merge_tags`: {said}"
    assert amendment["area"] == "merge_tags"
    assert amendment["metadata"]["claim"]["original"] == said


def test_an_amendment_naming_no_code_names_the_code_of_the_exchange_it_amends(daemon):
    """The amended chat settled its rule in an exchange only (no rule of it to supersede): the amendment that names no
    code takes the code that exchange names (`claims.chat_subject`)."""
    project = f"tomb-{uuid.uuid4().hex[:6]}"
    said = ("Amended rule, superseding the kill list: a '-name' tombstone strips that tag from the merged result for "
            "the lower-precedence tag sources only, never for a source above it.")
    with daemon.client(timeout=300) as http:
        old_key, _ = _chat(http, project, "2025-01-10T10:00:00Z", KILL_LIST_CHAT)
        assert not _rules(http, old_key)  # nothing to supersede
        new_key, _ = _chat(http, project, "2025-02-10T10:00:00Z", [INCIDENT,
            ("assistant", said),
            ("user", "Yes, that's the rule going forward.")])
        (amendment,) = [m for m in _rules(http, new_key) if "Amended rule" in m["content"]]
    assert amendment["content"] == f"`merge_tags`: {said}" and amendment["area"] == "merge_tags"
    assert amendment["metadata"]["claim"]["original"] == said


def test_the_rest_of_a_chat_that_amends_one_function_is_about_that_function(daemon):
    """Issue 31 (sde dev split, tagmerge family, chat B): besides its amendment, the chat that amends `merge_tags`
    states more of the new policy without naming any code ("A tombstone speaks only for the sources BELOW it.",
    "Tombstones never appear in the output, …"). Read alone they say nothing of where they apply; the chat
    amends one function, so they name it too: "`merge_tags`: Tombstones never appear …", area merge_tags."""
    project = f"merge-{uuid.uuid4().hex[:6]}"
    with daemon.client(timeout=300) as http:
        _chat(http, project, "2025-01-10T10:00:00Z", MERGE_POLICY_CHAT)
        new_key, _ = _chat(http, project, "2025-02-10T10:00:00Z", [
            INCIDENT,
            ("assistant", "So the global kill list is the flaw. What's the corrected scope?"),
            ("user", "A tombstone speaks only for the sources BELOW it, and a higher-precedence source's tag must "
                     "never be deleted by a source under it."),
            ("assistant", "Amended rule in full, superseding the original: sources arrive highest precedence first; "
                          "union in precedence order, de-duplicated case-insensitively, keeping the casing of the first "
                          "occurrence. Tombstones never appear in the output, and an unmatched tombstone is silently "
                          "ignored."),
            ("user", "That's the rule going forward.")])
        rules = {m["metadata"]["claim"].get("original", m["content"]): m for m in _rules(http, new_key)}
    said = ["A tombstone speaks only for the sources BELOW it, and a higher-precedence source's tag must never be "
            "deleted by a source under it.",
            "Tombstones never appear in the output, and an unmatched tombstone is silently ignored."]
    for text in said:
        assert rules[text]["content"] == f"`merge_tags`: {text}", sorted(rules)
        assert rules[text]["area"] == "merge_tags"
    assert any(m["content"].startswith("`merge_tags`: Amended rule in full") for m in rules.values())
