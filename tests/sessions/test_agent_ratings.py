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
                          source="session-summary",
                          metadata={"claim": {"rule": "accepted-recap", "speaker": "assistant", "accepted": None}})
        note = _remember(http, project, "The zephyr mirror syncs nightly over rsync to the backup host",
                         source="mcp")
        said = _remember(http, project, "The zephyr mirror keeps thirty days of snapshots on the backup host",
                         source="cli")
        assert not {recap, note, said} & set(_start(http, "ar-1", project, "2026-03-01T09:00:00Z"))
        found = _prompt(http, "ar-1", "how does the zephyr mirror handle TLS, sync and snapshots?",
                        "2026-03-01T09:01:00Z")
        assert {recap, note, said} <= set(found)  # a query finds all three
        r = http.post("/api/hooks/feedback", json={"session_key": "ar-1",
                                                    "memory_feedback": {recap: 0.8, note: 0.8, said: 0.8}})
        assert r.status_code == 200 and r.json()["applied"] == 3, r.text
        later = _start(http, "ar-2", project, "2026-03-02T09:00:00Z")
        later_too = _start(http, "ar-3", project, "2026-03-03T09:00:00Z")
    assert recap not in later and note not in later and recap not in later_too and note not in later_too
    judged = _verdicts(daemon, [recap, note, said], "2026-03-04T00:00:00Z")
    assert judged[recap][1].useful_sessions == 1 and judged[note][1].useful_sessions == 1  # the ratings are kept
    assert judged[recap][0] == ranking.ELIGIBLE and judged[note][0] == ranking.ELIGIBLE
    assert judged[said][0] == ranking.STANDING  # the user's own words, confirmed by use: standing
