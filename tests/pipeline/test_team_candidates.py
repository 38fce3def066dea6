"""Teams (issue 13): the decision stage only weighs a new fact against memories its source's author
may see, so the pipeline never updates or deletes someone's personal memory from another's."""

from __future__ import annotations

from kenning.core.types import MemoryDraft, Viewer
from kenning.workers.extraction import recall_candidates


def test_decision_candidates_are_what_the_source_author_sees(kenning):
    alice, bob = Viewer("alice", "core"), Viewer("bob", "core")
    secret = "alice only: the vault opens with the blue key"
    shared = "team rule: the vault is audited every month"
    kenning.remember(MemoryDraft(content=secret, scope="personal", project="vault"), viewer=alice)
    kenning.remember(MemoryDraft(content=shared, scope="team", project="vault"), viewer=alice)
    find = recall_candidates(lambda query, *, limit, filters: kenning.recall(query, limit=limit, filters=filters,
                                                                            track_access=False))
    as_bob = {c.content for c in find("vault key audited", 5, set(), "vault", bob)}
    as_alice = {c.content for c in find("vault key audited", 5, set(), "vault", alice)}
    assert shared in as_bob and secret not in as_bob
    assert {shared, secret} <= as_alice
    assert {shared, secret} <= {c.content for c in find("vault key audited", 5, set(), "vault", None)}
