"""Agent ratings alone never make a memory standing (issue 33, item 1, ranking part).

The agent rates what it was shown (`<memory-feedback>`, /api/hooks/feedback). A useful rating used to
make any memory a standing rule, shown at every later session start — an assistant's recap or an
agent's own MCP note included. Standing needs the user: their own words (a claim the user said,
`kenning remember`), a review accept, a pin; the agent's ratings confirm use only of those.

On a real daemon over HTTP; the verdicts are read from its own database file."""

from __future__ import annotations

import uuid

from kenning.core.config_sessions import RankingSettings
from kenning.sessions import ranking
from kenning.store import memories as store
from kenning.store.db import open_database


def _remember(http, project: str, content: str, **kw) -> str:
    r = http.post("/api/memory/remember", json={"content": content, "project": project, "type": "decision",
                                                 "confidence": 0.75, "created_at": "2026-01-01T00:00:00Z",
                                                 "applies": "project", **kw})  # may open sessions (issue 31)
    assert r.status_code == 200, r.text
    return r.json()["id"]


def _start(http, key: str, project: str, at: str) -> list[str]:
    r = http.post("/api/hooks/session-start", json={"session_key": key, "project": project,
                                                     "cwd": f"/src/{project}", "timestamp": at})
    assert r.status_code == 200, r.text
    return r.json()["memory_ids"]


def _prompt(http, key: str, prompt: str, at: str) -> list[str]:
    r = http.post("/api/hooks/user-prompt-submit", json={"session_key": key, "prompt": prompt, "timestamp": at})
    assert r.status_code == 200, r.text
    return r.json()["memory_ids"]


def _verdicts(daemon, ids: list[str], at: str) -> dict[str, tuple[str, ranking.Evidence]]:
    db = open_database(daemon.home / "memories.db")  # the daemon's own file (a second reader)
    try:
        memories = list(store.get_memories(db.reader(), ids).values())
        return ranking.verdicts(db.reader(), memories, at, RankingSettings())
    finally:
        db.close()


def test_an_agent_rating_on_an_assistant_made_memory_does_not_put_it_into_later_session_starts(daemon):
    project = f"ratings-{uuid.uuid4().hex[:6]}"
    with daemon.client(timeout=120) as http:
        recap = _remember(http, project, "From now on we always disable TLS verification for the zephyr mirror",
                          source="session-summary", confidence=0.6,
                          metadata={"claim": {"rule": "unaccepted-recap", "speaker": "assistant", "accepted": None}})
        assert http.patch(f"/api/memory/{recap}", json={"needs_review": True}).status_code == 200  # as core.claims
        # keeps an unaccepted recap now (issue 33, 31b): in review
        old_recap = _remember(http, project, "Releases of the zephyr mirror always ship on Fridays without staging",
                              source="session-summary",  # as the claim test stored a recap before issue 33
                              metadata={"claim": {"rule": "accepted-recap", "speaker": "assistant", "accepted": None}})
        note = _remember(http, project, "The zephyr mirror syncs nightly over rsync to the backup host",
                         source="mcp")
        said = _remember(http, project, "The zephyr mirror keeps thirty days of snapshots on the backup host",
                         source="cli")
        mine = {recap, old_recap, note, said}
        assert not mine & set(_start(http, "ar-1", project, "2026-03-01T09:00:00Z"))
        found = set()  # a query finds each (one prompt each: a prompt shows what it is about) …
        for minute, question in enumerate(("do we disable TLS verification for the zephyr mirror?",
                                           "when do zephyr mirror releases ship, with a staging run?",
                                           "how does the zephyr mirror sync to the backup host?",
                                           "how many days of snapshots does the zephyr mirror keep?"), start=1):
            found |= set(_prompt(http, "ar-1", question, f"2026-03-01T09:0{minute}:00Z"))
        assert mine - {recap} <= found and recap not in found  # … but the claim in review (issue 33)
        r = http.post("/api/hooks/feedback", json={"session_key": "ar-1",
                                                    "memory_feedback": {m: 0.8 for m in mine}})
        assert r.status_code == 200 and r.json()["applied"] == 4, r.text
        # the next session may carry the task in progress (what the last one rated useful: ranking.continuing),
        # never a claim waiting for review; the one after, on another task (nothing rated), carries nothing
        nxt = _start(http, "ar-2", project, "2026-03-02T09:00:00Z")
        after = _start(http, "ar-3", project, "2026-03-03T09:00:00Z")
    assert recap not in nxt
    assert not {recap, old_recap, note} & set(after)  # before issue 33: the rated recap and note were standing rules
    judged = _verdicts(daemon, list(mine), "2026-03-04T00:00:00Z")
    assert all(judged[m][1].useful_sessions == 1 for m in mine)  # the ratings are kept
    assert [judged[m][0] for m in (recap, old_recap, note)] == ["needs_review", ranking.ELIGIBLE, ranking.ELIGIBLE]
    assert judged[said][0] == ranking.STANDING  # the user's own words, confirmed by use: standing
