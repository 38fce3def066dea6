"""Session end asks the code graph which of the chat's names it defines (issue 31, item 2).

A real git repository indexed by the real code index, a real session through the service: the chat names
`bucket` once, as a plain word in a code span — on its own not enough to say what the chat is about (a plain
word in backticks usually names a field). The code graph defines `bucket`, so the fragment the user says
("Strict less-than, always.") is stored completed with it, and its area is that function.
"""

from __future__ import annotations

from kenning.core.events import SessionEnded, SessionStarted
from kenning.core.types import MemoryFilter
from kenning.store import codegraph as cgstore

FLAGS = "def bucket(user_id, flag_name, percent):\n    return hash(user_id + flag_name) % 100 <= percent\n"
CHAT = ("User: Rollout percentages never match analytics, please look at the flag code.\n"
        "Assistant: The comparison in `bucket` uses <= against the percent today.\n"
        "User: Strict less-than, always.\n")


def _end(kenning, key: str, project: str) -> list:
    kenning.sessions.session_start(SessionStarted(session_key=key, project=project, timestamp="2026-05-01T09:00:00Z"))
    kenning.sessions.session_end(SessionEnded(session_key=key, transcript=CHAT, timestamp="2026-05-01T09:30:00Z"),
                                 wait=True)
    memories, _ = kenning.list(MemoryFilter(project=project), limit=100)
    return [m for m in memories if m.type == "constraint"]


def test_a_fragment_is_completed_with_the_name_the_code_graph_defines(kenning, tmp_path):
    repo = tmp_path / "flagcore"
    (repo / "flagcore").mkdir(parents=True)
    (repo / "flagcore" / "flags.py").write_text(FLAGS)
    kenning.code_index(repo, "flagcore")
    assert cgstore.defined_names(kenning.db.reader(), "flagcore", ["bucket", "percent", "analytics"]) == {"bucket"}

    rules = _end(kenning, "s1", "flagcore")
    assert [m.content for m in rules] == ["`bucket`: Strict less-than, always."]
    assert (rules[0].applies, rules[0].area) == ("area", "bucket")


def test_without_an_index_the_same_chat_keeps_the_sentence_it_follows(kenning):
    rules = _end(kenning, "s2", "elsewhere")
    assert [m.content for m in rules] == [
        "Strict less-than, always. (after: The comparison in `bucket` uses <= against the percent today.)"]
