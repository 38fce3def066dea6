"""A rule stated in a commit body is kept; a body that describes the code is not (issue 31, item 3).

`git_history.body_rules` runs each body sentence through the one claim test and keeps it only when it
says it holds beyond the change. A description ("X also buffers its chunks as bytearray objects, and they
don't work with the mmap module") or a report of what the code did ("these get memoized and never get
`exit` called") is the commit's own record, found by a query, never a rule.
"""

from __future__ import annotations

import pytest

from kenning.memory.git_history import Commit, body_rules


def rules_of(body: str) -> list[str]:
    commit = Commit(sha="0" * 40, authored_at="2024-01-01T00:00:00Z", committed_at="2024-01-01T00:00:00Z",
                    author="dev", subject="subject", body=body)
    return [d.content for d in body_rules(commit, "m1", project="p", repo="/r")]


@pytest.mark.parametrize("body", [
    "BufferedWriter also buffers all of its pending chunks as bytearray objects. Those objects cannot be "
    "pickled, and they don't work with the mmap module either.",
    "In `walk` these get memoized and never get `exit` called on them, so the hooks never get called.",
])
def test_a_body_that_describes_the_code_states_no_rule(body):
    assert rules_of(body) == []


@pytest.mark.parametrize("body,rule", [
    ("The budget is measured. Keep MAX_RETRIES = 5; do not round it up to 10.", "Keep MAX_RETRIES = 5; do not round it up to 10."),
    ("Window key and value lists have to be the same length", "Window key and value lists have to be the same length"),
    ("Tombstones never appear in the output, and an unmatched tombstone is ignored.",
     "Tombstones never appear in the output, and an unmatched tombstone is ignored."),
    ("IPv6 literals match ONLY exact entries: wildcards are a DNS concept.",
     "IPv6 literals match ONLY exact entries: wildcards are a DNS concept."),
])
def test_a_rule_in_a_commit_body_is_kept(body, rule):
    assert rules_of(body) == [rule]
