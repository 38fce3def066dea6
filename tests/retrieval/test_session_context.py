"""Session context on a real store and the real model: the answer recorded after a matching
question is recalled through its session, within the window, honouring filters."""

from __future__ import annotations

from kenning.core.types import MemoryDraft, MemoryFilter
from kenning.retrieval.config import preset
from kenning.retrieval.extras_config import ExtrasConfig
from kenning.retrieval.session_context import SessionContextParams

QUERY = "why did the nightly invoice export stop running"
SESSION = [
    "Nightly invoice export stopped running after Tuesday's deploy; investigating.",
    "Found it: cron lost its TZ variable, so the schedule fired at 3am UTC into a locked table.",
    "Pinned TZ=Europe/Berlin in the crontab; lock timeout is 30 s now.",
    "Lunch order for Friday: dumplings.",
    "Unrelated: the office plant needs water.",
    "Someone asked about parking permits.",
    "Far away in the same session: the cache warmer retries three times.",
]
# Same topic, other facts: they outrank the fix in plain hybrid recall.
UNRELATED = [f"Invoice batch {i} was exported nightly to the accounting system without errors." for i in range(40)]


def remember_session(kenning, session_key="s-1", project=None):
    results = kenning.remember_many(
        [MemoryDraft(content=c, session_key=session_key, project=project) for c in SESSION]
        + [MemoryDraft(content=c, project=project) for c in UNRELATED]
    )
    return [r.id for r in results]


def ranked_ids(kenning, config, **kw):
    return [h.memory.id for h in kenning.recall(QUERY, limit=50, config=config, track_access=False, **kw)]


def test_neighbours_of_a_strong_hit_rise_and_say_why(kenning):
    ids = remember_session(kenning)
    plain = ranked_ids(kenning, "hybrid")
    with_context = kenning.recall(QUERY, limit=50, config="context", track_access=False)
    order = [h.memory.id for h in with_context]
    assert order[0] == ids[0]
    # the fix, two places after the question, shares no word with the query and sits low in
    # plain hybrid recall; with context it moves up, and the lent score shows as the "context" leg
    assert plain.index(ids[2]) >= 10
    assert order.index(ids[2]) < plain.index(ids[2]) - 5
    fix = next(h for h in with_context if h.memory.id == ids[2])
    assert fix.legs["context"]["score"] > 0 and any("same session" in r for r in fix.reasons)
    assert all("context" not in h.legs for h in with_context if h.memory.id in ids[len(SESSION):])


def test_only_the_window_around_the_lending_hits_gains(kenning):
    ids = remember_session(kenning)
    only_top_hit = preset("context").with_(extras=ExtrasConfig(session_context=SessionContextParams(top=1)))
    hits = {h.memory.id: h for h in kenning.recall(QUERY, limit=50, config=only_top_hit, track_access=False)}
    lent = [hits[i].legs.get("context", {}).get("score", 0.0) if i in hits else 0.0 for i in ids[:len(SESSION)]]
    assert lent[0] == 0.0  # the lender itself
    assert lent[1] > lent[2] > lent[3] > 0.0  # decay with distance
    assert lent[4:] == [0.0, 0.0, 0.0]  # beyond the window of 3


def test_neighbours_honour_filters_and_deletions(kenning):
    ids = remember_session(kenning, project="alpha")
    kenning.forget(ids[1])
    hits = kenning.recall(QUERY, limit=50, config="context", filters=MemoryFilter(project="alpha"),
                          track_access=False)
    found = {h.memory.id for h in hits}
    assert ids[1] not in found  # deleted memories are neither neighbours nor results
    fix = next(h for h in hits if h.memory.id == ids[2])
    # with the neighbour at distance 1 gone, the fix is now adjacent to the question
    assert fix.legs["context"]["score"] > 0
    assert kenning.recall(QUERY, limit=5, config="context", filters=MemoryFilter(project="beta"),
                          track_access=False) == []


def test_the_default_recall_uses_it_unless_switched_off(kenning):
    assert "session_context" in preset("default").stages
    assert "session_context" in kenning.recall_config().stages
    off = kenning.settings.model_copy(update={
        "recall": kenning.settings.recall.model_copy(update={"session_context": False})})
    kenning.settings = off
    assert "session_context" not in kenning.recall_config().stages


def test_episodes_neither_lend_nor_borrow(kenning):
    """A chat's exchanges all restate its subject: lending among them let a whole chat outrank
    the curated memory it quotes. Episodes keep their own legs' score, and a memory recorded in
    the same session gains nothing from an episode next to it."""
    gotcha = kenning.remember_many([MemoryDraft(content="Gotcha: Stripe sends duplicate webhook events; dedupe on event.id",
                                                type="gotcha", session_key="s-2")])[0].id
    chat = kenning.remember_many([
        MemoryDraft(content=f"User: {text} Assistant: noted.", type="episode", session_key="s-2")
        for text in ("gotcha: stripe sends duplicate webhook events, dedupe on the event id",
                     "the billing worker retries stripe webhooks three times",
                     "stripe webhook events arrive twice sometimes, thanks that fixed it")
    ])
    hits = kenning.recall("stripe duplicate webhook events", limit=10, config="context", track_access=False)
    assert hits[0].memory.id == gotcha
    for hit in hits:
        if hit.memory.id in {gotcha, *(r.id for r in chat)}:
            assert "context" not in hit.legs
