"""The opening stays small (issue 32): what session start's block and the rating request cost in characters."""

from __future__ import annotations

from kenning.sessions.inject import prompt_text, session_start_text

CONTINUITY = "Last session in this project (2026-11-29, claude-code): task: fix merge_tags casing"


def test_a_start_block_with_only_the_continuity_line_does_not_ask_for_ids():
    alone = session_start_text([], continuity=CONTINUITY)
    assert "cite an id" not in alone and "Memories from earlier sessions:" in alone and CONTINUITY in alone
    shown = session_start_text([{"memory_id": "0123456789abcdef", "content": "Never push to main.", "type": "constraint"}],
                               continuity=CONTINUITY)
    assert "[0123456789abcdef]" in shown and "cite an id when you rely on one" in shown


def test_the_rating_request_names_each_id_once_and_stays_short():
    ids = [f"{i:016x}" for i in range(7)]
    for tool in (False, True):
        request = prompt_text([], ids, rate_with_tool=tool)
        assert request.count("IDs: ") == 1 and ", ".join(ids) in request
        assert len(request) - len(", ".join(ids)) <= 300, "the request rides on every block that shows memories"
    assert "mcp__kenning__memory_feedback" in prompt_text([], ids, rate_with_tool=True)
    assert '<memory-feedback>{"0000000000000000": 0.8}</memory-feedback>' in prompt_text([], ids)
